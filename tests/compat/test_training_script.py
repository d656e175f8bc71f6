"""Character-level GPT training scripts in the style of the famous PyTorch ones, run through the switch.

``SCRIPT`` exercises the infrastructure; ``GPT_SCRIPT`` (the issue's end-to-end test) is a
complete small GPT run whose losses are compared with PyTorch's, step by step.


It uses the infrastructure those scripts need (not their missing ops): device
selection, ``torch.backends`` flags, a disabled GradScaler, ``randint`` +
``stack`` batches, a ``DataLoader``, a ``@torch.no_grad()`` evaluation that fills
``torch.zeros(k)`` with ``loss.item()``, f-string formatting of tensors,
parameter groups, a scheduler, gradient clipping and sampling with
``multinomial``.  Run twice with the same seed it prints the same thing.
"""

from __future__ import annotations

import importlib.util
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

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


# A GPT written as PyTorch code: tokens, causal self-attention from masked_fill + tril, a
# DataLoader, AdamW with two parameter groups, clip_grad_norm_, a cosine schedule, a checkpoint
# dict through torch.save / torch.load (training resumes from it in a fresh model and optimizer),
# sampling with topk and multinomial.  The initial weights and the shuffle are drawn by NumPy, so
# minitensor and PyTorch start from the same point and see the same batches: their losses agree.
GPT_SCRIPT = """
import json
import math
import sys

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset

out_dir = sys.argv[1]
rng = np.random.default_rng(0)
words = "the cat sat on a mat and saw one dog run to the red door then stop".split()
text = " ".join(rng.choice(words, 600))
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
vocab, block_size, n_embd, n_head, n_layer, batch_size = len(chars), 16, 32, 4, 2, 8


class Chunks(Dataset):
    def __len__(self):
        return len(data) - block_size - 1

    def __getitem__(self, i):
        return data[i : i + block_size], data[i + 1 : i + block_size + 1]


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)
        self.register_buffer("mask", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(n_embd, dim=2)
        q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention()
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(vocab, n_embd)
        self.pos = nn.Embedding(block_size, n_embd)
        self.blocks = nn.Sequential(*[Block() for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab, bias=False)

    def forward(self, idx, targets=None):
        T = idx.size(1)
        x = self.tok(idx) + self.pos(torch.arange(T, dtype=torch.long))
        logits = self.head(self.ln_f(self.blocks(x)))
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    @torch.no_grad()
    def generate(self, idx, new_tokens, top_k, greedy=False):
        for _ in range(new_tokens):
            logits, _ = self(idx[:, -block_size:])
            logits = logits[:, -1, :]
            values, indices = torch.topk(logits, top_k)
            if greedy:
                nxt = indices[:, :1]
            else:
                logits = logits.masked_fill(logits < values[:, [-1]], float("-inf"))
                nxt = torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)
            idx = torch.cat((idx, nxt), dim=1)
        return idx


def build(lr):
    model = GPT()
    init = np.random.default_rng(1)  # the same initial weights in any library: drawn by NumPy
    state = {}
    for k, v in model.state_dict().items():
        if v.dim() == 2:
            state[k] = torch.tensor(init.normal(0.0, 0.02, tuple(v.shape)).astype(np.float32))
        else:  # biases 0 and LayerNorm weights 1, the buffer (mask) as built
            state[k] = torch.zeros_like(v) if k.endswith("bias") else v
    model.load_state_dict(state)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.95))
    return model, optimizer


steps, resume_at = 24, 12
model, optimizer = build(3e-3)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps, eta_min=3e-4)
order = np.random.default_rng(2).permutation(len(Chunks())).tolist()  # a shuffle both libraries share
loader = DataLoader(Chunks(), batch_size=batch_size, sampler=order, drop_last=True)
losses, norms = [], []
for step, (xb, yb) in enumerate(loader):
    if step == resume_at:  # checkpoint, then continue in a fresh model and optimizer loaded from it
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "step": step}, f"{out_dir}/ckpt.pt")
        checkpoint = torch.load(f"{out_dir}/ckpt.pt")
        model, optimizer = build(1.0)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps, eta_min=3e-4)
        scheduler.load_state_dict(checkpoint["scheduler"])
        assert checkpoint["step"] == resume_at
    if step == steps:
        break
    _, loss = model(xb, yb)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).item())
    optimizer.step()
    scheduler.step()
    losses.append(loss.item())
model.eval()
start = torch.tensor([[stoi["t"]]], dtype=torch.long)
torch.manual_seed(0)
sample = model.generate(start, 20, top_k=5)[0].tolist()
greedy = model.generate(start, 20, top_k=5, greedy=True)[0].tolist()
print(json.dumps({"losses": losses, "norms": norms, "lr": scheduler.get_last_lr(), "sample": sample,
                  "greedy": "".join(chars[i] for i in greedy), "vocab": vocab}))
"""


def _run_gpt(run_python, tmp_path: Path, args: list) -> dict:
    path = tmp_path / "gpt_train.py"
    path.write_text(GPT_SCRIPT)
    return json.loads(run_python([*args, str(path), str(tmp_path)], cwd=tmp_path).stdout)


def test_gpt_script_trains_resumes_and_samples(tmp_path: Path, run_python) -> None:
    ours = _run_gpt(run_python, tmp_path, ["-m", "minitensor.compat"])
    losses = ours["losses"]
    assert len(losses) == 24 and np.mean(losses[-4:]) < np.mean(losses[:4]) - 0.3  # it learns
    assert all(0 < n for n in ours["norms"]) and abs(ours["lr"][0] - 3e-4) < 1e-12  # annealed to eta_min
    assert len(ours["sample"]) == 21 and all(0 <= i < ours["vocab"] for i in ours["sample"])
    assert len(ours["greedy"]) == 21
    with zipfile.ZipFile(tmp_path / "ckpt.pt") as archive:  # PyTorch's checkpoint format (torch.save's)
        assert "archive/data.pkl" in archive.namelist()


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
def test_gpt_script_losses_equal_pytorch(tmp_path: Path, run_python) -> None:
    ours = _run_gpt(run_python, tmp_path, ["-m", "minitensor.compat"])
    theirs = _run_gpt(run_python, tmp_path, [])  # the same script on the real PyTorch
    # float32 both ways; 24 AdamW steps (12 before and 12 after the checkpoint) stay within 1e-5.
    np.testing.assert_allclose(ours["losses"], theirs["losses"], rtol=1e-5)
    np.testing.assert_allclose(ours["norms"], theirs["norms"], rtol=1e-5)
    np.testing.assert_allclose(ours["lr"], theirs["lr"], rtol=1e-12)
    assert ours["greedy"] == theirs["greedy"]  # topk(1) decoding of the same weights
