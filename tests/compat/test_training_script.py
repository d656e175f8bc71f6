"""A character-level GPT training script in the style of the famous PyTorch ones, run through the switch.

It uses the infrastructure those scripts need (not their missing ops): device
selection, ``torch.backends`` flags, a disabled GradScaler, ``randint`` +
``stack`` batches, a ``DataLoader``, a ``@torch.no_grad()`` evaluation that fills
``torch.zeros(k)`` with ``loss.item()``, f-string formatting of tensors,
parameter groups, a scheduler, gradient clipping and sampling with
``multinomial``.  Run twice with the same seed it prints the same thing.
"""

from __future__ import annotations

from pathlib import Path

SCRIPT = """
import math
from contextlib import nullcontext

import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(1337)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
device = "cuda" if torch.cuda.is_available() else "cpu"
device_type = "cuda" if "cuda" in device else "cpu"
dtype = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float16"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
scaler = torch.amp.GradScaler("cuda", enabled=False)

text = "hello world, hello minitensor. " * 20
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
n = int(0.9 * len(data))
train_data, val_data = data[:n], data[n:]
block_size, batch_size, n_embd, n_head = 8, 4, 16, 2


def get_batch(split):
    d = train_data if split == "train" else val_data
    ix = torch.randint(len(d) - block_size, (batch_size,))
    x = torch.stack([d[i : i + block_size] for i in ix])
    y = torch.stack([d[i + 1 : i + block_size + 1] for i in ix])
    return x.to(device, non_blocking=True), y.to(device, non_blocking=True)


class Chunks(Dataset):
    def __len__(self):
        return len(train_data) - block_size - 1

    def __getitem__(self, i):
        return train_data[i : i + block_size], train_data[i + 1 : i + block_size + 1]


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(n_embd)
        self.qkv = nn.Linear(n_embd, 3 * n_embd, bias=False)
        self.proj = nn.Linear(n_embd, n_embd)
        hidden = 4 * n_embd
        self.mlp = nn.Sequential(nn.Linear(n_embd, hidden), nn.GELU(), nn.Linear(hidden, n_embd), nn.Dropout(0.1))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(self.ln(x)).split(n_embd, dim=2)
        q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.mlp(x)


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(len(chars), n_embd, device=device)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.blocks = nn.ModuleList([Block() for _ in range(2)])
        self.lm_head = nn.Linear(n_embd, len(chars), bias=False)
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        x = self.wte(idx) + self.wpe(torch.arange(0, T, dtype=torch.long, device=device))
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(x)
        loss = None if targets is None else F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    @torch.no_grad()
    def generate(self, idx, max_new_tokens):
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -block_size:])
            probs = F.softmax(logits[:, -1, :], dim=-1)
            idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
        return idx


@torch.no_grad()
def estimate_loss(model, eval_iters=3):
    out = {}
    model.eval()
    for split in ["train", "val"]:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            _, loss = model(*get_batch(split))
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


model = GPT().to(device)
decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                              lr=1e-2, betas=(0.9, 0.95))
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=12, eta_min=1e-4)
loader = DataLoader(Chunks(), batch_size=batch_size, shuffle=True, drop_last=True, num_workers=0)
first = estimate_loss(model)
step = 0
for xb, yb in loader:
    with ctx:
        _, loss = model(xb, yb)
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    scheduler.step()
    step += 1
    if step == 12:
        break
last = estimate_loss(model)
assert math.isfinite(norm.item()) and scheduler.get_last_lr()[0] < 1e-2
sample = model.generate(torch.zeros((1, 1), dtype=torch.long, device=device), max_new_tokens=10)[0].tolist()
print(f"{first['train']:.4f} {last['train']:.4f} {len(sample)} {''.join(chars[i] for i in sample)!r}")
"""


def test_gpt_style_script_runs_and_is_reproducible(tmp_path: Path, run_python) -> None:
    path = tmp_path / "train_gpt.py"
    path.write_text(SCRIPT)
    first = run_python(["-m", "minitensor.compat", str(path)], cwd=tmp_path).stdout
    again = run_python(["-m", "minitensor.compat", str(path)], cwd=tmp_path).stdout
    start, end, length, _ = first.split(" ", 3)
    assert length == "11" and float(end) < float(start)  # it learns
    assert first == again
