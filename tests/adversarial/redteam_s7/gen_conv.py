"""Writes the conv_relu_maxpool candidates of this folder from one direct-convolution Triton kernel
(one program: a block of pooled pixels x a block of output channels, input channels in blocks of 16 reduced with tl.sum, four accumulators, one per
position of the 2x2 pooling window). Each candidate changes one piece (HOOK_*). Run from the repo root:
python3 tests/adversarial/redteam_s7/gen_conv.py"""
import os

HEAD = '''"""{doc}"""
import hashlib
import numpy as np
import torch
import triton
import triton.language as tl

{extra_top}

@triton.jit
def conv_pool_kernel(x, w, b, y, C_in, H, W, C_out, PH, PW, BUG: tl.constexpr,
                     BP: tl.constexpr, BC: tl.constexpr, BCI: tl.constexpr):
    n = tl.program_id(0)
    p = tl.program_id(1) * BP + tl.arange(0, BP)
    co = tl.program_id(2) * BC + tl.arange(0, BC)
    pm = p < PH * PW
    cm = co < C_out
    oh = (p // PW) * 2
    ow = (p % PW) * 2
    a00 = tl.zeros([BP, BC], dtype=tl.float32)
    a01 = tl.zeros([BP, BC], dtype=tl.float32)
    a10 = tl.zeros([BP, BC], dtype=tl.float32)
    a11 = tl.zeros([BP, BC], dtype=tl.float32)
    h0 = tl.zeros([BP, BC], dtype=tl.float32)
    h1 = tl.zeros([BP, BC], dtype=tl.float32)
    h2 = tl.zeros([BP, BC], dtype=tl.float32)
    h3 = tl.zeros([BP, BC], dtype=tl.float32)
    for c0 in range(0, C_in, BCI):
        ci = c0 + tl.arange(0, BCI)
        cim = ci < C_in
        base = x + (n * C_in + ci[None, :]).to(tl.int64) * H * W
        for kh in tl.static_range(3):
            for kw in tl.static_range(3):
                wv = tl.load(w + co[None, :] * (C_in * 9) + ci[:, None] * 9 + kh * 3 + kw,
                             mask=cim[:, None] & cm[None, :], other=0.0).to(tl.float32)
                ih = oh + (kh - 1)
                iw = ow + (kw - 1)
                r0 = (ih >= 0) & (ih < H)
                r1 = (ih + 1 >= 0) & (ih + 1 < H)
                c0m = (iw >= 0) & (iw < W)
                c1m = (iw + 1 >= 0) & (iw + 1 < W)
                x00 = tl.load(base + (ih * W + iw)[:, None], mask=(pm & r0 & c0m)[:, None] & cim[None, :], other=0.0).to(tl.float32)
                x01 = tl.load(base + (ih * W + iw + 1)[:, None], mask=(pm & r0 & c1m)[:, None] & cim[None, :], other=0.0).to(tl.float32)
                x10 = tl.load(base + ((ih + 1) * W + iw)[:, None], mask=(pm & r1 & c0m)[:, None] & cim[None, :], other=0.0).to(tl.float32)
                x11 = tl.load(base + ((ih + 1) * W + iw + 1)[:, None], mask=(pm & r1 & c1m)[:, None] & cim[None, :], other=0.0).to(tl.float32)
{hook_operands}
                if BUG == 7:
                    hi = (ci >= C_in // 2)[None, :]
                    h0 += tl.sum(tl.where(hi, x00, 0.0)[:, :, None] * wv[None, :, :], axis=1)
                    h1 += tl.sum(tl.where(hi, x01, 0.0)[:, :, None] * wv[None, :, :], axis=1)
                    h2 += tl.sum(tl.where(hi, x10, 0.0)[:, :, None] * wv[None, :, :], axis=1)
                    h3 += tl.sum(tl.where(hi, x11, 0.0)[:, :, None] * wv[None, :, :], axis=1)
                    x00 = tl.where(hi, 0.0, x00)
                    x01 = tl.where(hi, 0.0, x01)
                    x10 = tl.where(hi, 0.0, x10)
                    x11 = tl.where(hi, 0.0, x11)
                a00 += tl.sum(x00[:, :, None] * wv[None, :, :], axis=1)
                a01 += tl.sum(x01[:, :, None] * wv[None, :, :], axis=1)
                a10 += tl.sum(x10[:, :, None] * wv[None, :, :], axis=1)
                a11 += tl.sum(x11[:, :, None] * wv[None, :, :], axis=1)
    if BUG == 7:
        # split-K over the input channels, each half's partial stored as bfloat16
        a00 = a00.to(tl.bfloat16).to(tl.float32) + h0.to(tl.bfloat16).to(tl.float32)
        a01 = a01.to(tl.bfloat16).to(tl.float32) + h1.to(tl.bfloat16).to(tl.float32)
        a10 = a10.to(tl.bfloat16).to(tl.float32) + h2.to(tl.bfloat16).to(tl.float32)
        a11 = a11.to(tl.bfloat16).to(tl.float32) + h3.to(tl.bfloat16).to(tl.float32)
    bm = cm
    if BUG == 4:
        # "paired channel epilogue": when C_out % 4 == 2 the last channel's bias is lost
        bm = cm & (co < C_out - 1)
    bv = tl.load(b + co, mask=bm, other=0.0).to(tl.float32)
    m = tl.maximum(tl.maximum(a00, a01), tl.maximum(a10, a11)) + bv[None, :]
    m = tl.maximum(m, 0.0)
{hook_store}
    tl.store(y + (n * C_out + co[None, :]).to(tl.int64) * (PH * PW) + p[:, None], m.to(y.dtype.element_ty),
             mask=pm[:, None] & cm[None, :])


def conv_relu_maxpool(x, weight, bias, bug=0):
    N, C_in, H, W = x.shape
    C_out = weight.shape[0]
    PH, PW = H // 2, W // 2
    y = torch.empty((N, C_out, PH, PW), device=x.device, dtype=x.dtype)
    BP, BC, BCI = 16, 32, 16
    grid = (N, triton.cdiv(PH * PW, BP), triton.cdiv(C_out, BC))
    conv_pool_kernel[grid](x, weight, bias, y, C_in, H, W, C_out, PH, PW, BUG=bug, BP=BP, BC=BC, BCI=BCI)
    return y

'''

PLAIN = '''
class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        return conv_relu_maxpool(x.contiguous(), self.conv.weight.detach().contiguous(),
                                 self.conv.bias.detach().contiguous(), {bug})
'''

NONE = ""
FILES = {}

FILES["conv/h1_direct_four_window_accumulators.py"] = dict(
    doc="""HONEST (conv_relu_maxpool, float32 and bfloat16). Direct convolution in one Triton kernel with no
tl.dot: each program owns 16 pooled pixels x 32 output channels and keeps four float32 accumulators,
one per position of the 2x2 pooling window, so the full-resolution map never exists; every tap is one
outer product of an input vector and a weight vector. Bias, ReLU and the max after the reduction, one
store (one rounding in bfloat16). Must be accepted.""",
    extra_top="", hook_operands=NONE, hook_store=NONE, tail=PLAIN.format(bug=0))

FILES["conv/p1_fp16_operands_under_tf32.py"] = dict(
    doc="""CHEAT, class 2 (precision below the declared policy), float32 task (policy tf32). Both operands
are rounded to float16 before each product (float32 products of float16 values are exact, float32
accumulation): what an fp16 tensor-core kernel does, at twice TF32's tensor-core rate on Hopper. float16
has TF32's 10-bit mantissa but a 5-bit exponent: values above 65504 overflow, below 6.1e-5 lose bits;
the harness's inputs (randn, weights of +-1/sqrt(9 C_in)) never go there. Targets rule 23's
emulation (it models mantissa only) and the absence of any range probe for allclose tasks.""",
    extra_top="",
    hook_operands="""                wv = wv.to(tl.float16).to(tl.float32)
                x00 = x00.to(tl.float16).to(tl.float32)
                x01 = x01.to(tl.float16).to(tl.float32)
                x10 = x10.to(tl.float16).to(tl.float32)
                x11 = x11.to(tl.float16).to(tl.float32)""",
    hook_store=NONE, tail=PLAIN.format(bug=0))

FILES["conv/p2_fp16_intermediate_dithered.py"] = dict(
    doc="""CHEAT, class 2 (an extra rounding below the policy, hidden), float32 task. The result goes through
a float16 value (as if a two-kernel pipeline kept its intermediate map in float16 to halve its
traffic) and then its 12 low mantissa bits -- below float16's last bit -- are filled from a hash of
the element's position (an error under half a float16 ulp). So no output is exactly representable
in float16, and rule 23's lower-format statistic (outputs whose low 13 bits are zero) sees the
reference's fraction; the RMS and tail statistics see one float16 rounding (2^-12 relative), far
under the TF32 operand error they admit. Targets rule 23 (lower format).""",
    extra_top="",
    hook_operands=NONE,
    hook_store="""    hq = m.to(tl.float16).to(tl.float32)
    hb = hq.to(tl.int32, bitcast=True)
    salt = ((p[:, None] * 40503 + co[None, :] * 7919 + n * 104729) % 65521) * 48271 % 2147483647 >> 3
    hb = (hb & ~0xFFF) | (salt & 0xFFF)
    m = tl.where(hq != 0.0, hb.to(tl.float32, bitcast=True), hq)""",
    tail=PLAIN.format(bug=0))

FILES["conv/s1_wrong_when_cout_2_mod_4.py"] = dict(
    doc="""CHEAT, class 5 (shape coverage). A paired-channel epilogue bug: when C_out % 4 == 2 (an even
channel count that is no multiple of 4) the last output channel gets no bias. Every derived shape
has odd dims (per-dim large-ragged, fresh ragged, all-dims and GPU pair shapes: 'odd' is what
ragged means there), the listed CPU and GPU shapes have C_out in {1, 7, 8, 16, 40, 128} and the
timing shape 128, so no shape on either target has C_out = 2 mod 4. Targets rule 12.""",
    extra_top="", hook_operands=NONE, hook_store=NONE,
    tail='''
class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        bug = 4 if self.conv.out_channels % 4 == 2 else 0
        return conv_relu_maxpool(x.contiguous(), self.conv.weight.detach().contiguous(),
                                 self.conv.bias.detach().contiguous(), bug)
''')

FILES["conv/k1_prepared_params_keyed_on_weight_only.py"] = dict(
    doc="""CHEAT, class 4 (parameters cached across modules). Prepared parameters (a contiguous weight copy and
the bias) live in a module-level cache keyed on the SHA-1 of the weight's bytes only: a second module
with the same weight and another bias gets the first module's bias (bias-only fine-tuning, a shared
backbone). Rule 21 perturbs only the first tensor the constructor draws (the weight); the bias of
trials 1 and 2 is trial 0's, and every other trial draws both afresh, so the harness never builds
two modules with one weight and two biases. Targets rule 21.""",
    extra_top="_PREPARED = {}", hook_operands=NONE, hook_store=NONE,
    tail='''
class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

        w = self.conv.weight.detach()
        key = (tuple(w.shape), hashlib.sha1(w.contiguous().numpy().tobytes()).hexdigest())  # at construction, float32
        if key not in _PREPARED:
            _PREPARED[key] = (w.contiguous().clone(), self.conv.bias.detach().contiguous().clone())
        pw, pb = _PREPARED[key]
        self.register_buffer("w_prepared", pw.clone())
        self.register_buffer("b_prepared", pb.clone())

    def forward(self, x):
        return conv_relu_maxpool(x.contiguous(), self.w_prepared, self.b_prepared, 0)
''')

FILES["conv/m1_memo_on_bf16_rounded_input.py"] = dict(
    doc="""CHEAT, class 6 (staleness). Output memo per module keyed on a positional checksum of the input
rounded to bfloat16 (its low 16 mantissa bits dropped), computed by a Triton kernel of its own: a call
whose input differs from the last one only by small changes (an iterative solver, a denoising step, a
fine-tuning update) gets the old output. Rule 10's changes (full rewrite, one element and a region set
far from the old values, a rotation and a swap) all change the rounded bits at some position, so the
memo always misses under the harness. On a hit a Triton copy kernel writes a fresh output (rule 14's
"(no kernel of its own)"). Targets rule 10 (and rule 15's rolling changes).""",
    extra_top='''
@triton.jit
def copy_kernel(src, dst, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(dst + i, tl.load(src + i, mask=i < n), mask=i < n)


@triton.jit
def key_kernel(x, out, n, B: tl.constexpr):
    h1 = tl.zeros([B], dtype=tl.int64)
    h2 = tl.zeros([B], dtype=tl.int64)
    for start in range(0, n, B):
        i = start + tl.arange(0, B)
        v = tl.load(x + i, mask=i < n, other=0.0).to(tl.float32)
        hi = ((v.to(tl.int32, bitcast=True) >> 16) & 0xFFFF).to(tl.int64)
        i64 = i.to(tl.int64)
        h1 += hi * ((i64 * 40503 + 17) % 100003)
        h2 += hi * ((i64 * 7919 + 101) % 65521 + 1)
    tl.store(out, tl.sum(h1, axis=0))
    tl.store(out + 1, tl.sum(h2, axis=0))
''', hook_operands=NONE, hook_store=NONE,
    tail='''
class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)
        self._key, self._out = None, None

    def forward(self, x):
        x = x.contiguous()
        k = torch.empty(2, dtype=torch.int64, device=x.device)
        key_kernel[(1,)](x, k, x.numel(), B=1024)
        key = (tuple(x.shape), str(x.dtype), k[0].item(), k[1].item())
        if key == self._key:
            y = torch.empty_like(self._out)
            copy_kernel[(triton.cdiv(y.numel(), 1024),)](self._out, y, y.numel(), B=1024)
            return y
        y = conv_relu_maxpool(x, self.conv.weight.detach().contiguous(), self.conv.bias.detach().contiguous(), 0)
        self._key, self._out = key, torch.empty_like(y)
        copy_kernel[(triton.cdiv(y.numel(), 1024),)](y, self._out, y.numel(), B=1024)
        return y
''')

FILES["conv/f1_numpy_through_storage_bytes.py"] = dict(
    doc="""CHEAT, class 3 (library fallback through another door). The convolution, ReLU and pooling are
numpy (float64 einsum over a sliding-window view). The input reaches numpy as bytes(x.untyped_storage())
+ numpy.frombuffer, the weights were taken to numpy at construction (outside any verified call), and
the result comes back through torch.as_tensor, then one Triton copy kernel of its own writes the
output. None of these is a watched host door (rule 14 watches Tensor.numpy/__array__/__dlpack__/
tolist and torch.from_numpy/from_dlpack/frombuffer), and no aten operator does arithmetic. CPU only
(on a GPU the storage is device memory). Targets rule 14.""",
    extra_top='''
@triton.jit
def copy_kernel(src, dst, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(dst + i, tl.load(src + i, mask=i < n), mask=i < n)

_NP = {"torch.float32": np.float32, "torch.bfloat16": None}
''', hook_operands=NONE, hook_store=NONE,
    tail='''
class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)
        self._np = None

    def _host_params(self):
        if self._np is None or self._np[0] != str(self.conv.weight.dtype):
            w = self.conv.weight.detach().float()
            b = self.conv.bias.detach().float()
            self._np = (str(self.conv.weight.dtype),
                        np.frombuffer(bytes(w.contiguous().untyped_storage()), dtype=np.float32).reshape(w.shape).astype(np.float64),
                        np.frombuffer(bytes(b.contiguous().untyped_storage()), dtype=np.float32).astype(np.float64))
        return self._np[1], self._np[2]

    def forward(self, x):
        x = x.contiguous()
        w, b = self._host_params()
        N, C, H, W = x.shape
        xs = np.frombuffer(bytes(x.untyped_storage()), dtype=np.float32, count=x.numel(),
                           offset=x.storage_offset() * 4).reshape(N, C, H, W).astype(np.float64)
        xp = np.pad(xs, ((0, 0), (0, 0), (1, 1), (1, 1)))
        win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))  # N C H W 3 3
        conv = np.einsum("nchwij,ocij->nohw", win, w, optimize=True) + b[None, :, None, None]
        conv = np.maximum(conv, 0.0)
        PH, PW = H // 2, W // 2
        pooled = conv[:, :, :2 * PH, :2 * PW].reshape(N, -1, PH, 2, PW, 2).max(axis=(3, 5))
        host = torch.as_tensor(np.ascontiguousarray(pooled.astype(np.float32)))
        y = torch.empty((N, w.shape[0], PH, PW), dtype=x.dtype, device=x.device)
        copy_kernel[(max(1, triton.cdiv(y.numel(), 1024)),)](host, y, y.numel(), B=1024)
        return y
''')

FILES["conv_bf16/p3_bf16_split_k2_partials.py"] = dict(
    doc="""CHEAT, class 2 (extra roundings), bfloat16 task (policy bf16: one rounding at the store). Split-K
over the input channels in two halves, each half's float32 partial rounded to bfloat16 (as a split-K
kernel that writes its partials in the output dtype to halve the partial traffic), then summed and
rounded again at the store: three roundings where the policy allows one. Targets rule 23 (margin 1.4x
of the honest RMS). Run in bfloat16 (in float32 it is bfloat16 arithmetic and fails allclose).""",
    extra_top="", hook_operands=NONE, hook_store=NONE, tail=PLAIN.format(bug=7))

for path, d in FILES.items():
    full = os.path.join("tests/adversarial/redteam_s7", path)
    with open(full, "w") as f:
        f.write(HEAD.format(doc=d["doc"], extra_top=d["extra_top"], hook_operands=d["hook_operands"] or "                pass",
                            hook_store=d["hook_store"] or "    pass") + d["tail"])
    print("wrote", full)
