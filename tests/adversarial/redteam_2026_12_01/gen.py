"""Writes the red-team candidate files (self-contained ModelNew files) from shared kernel text."""
import textwrap, pathlib
OUT = pathlib.Path("/tmp/tests/adversarial/redteam_2026_12_01/conv")

HEAD = "import torch\nimport triton\nimport triton.language as tl\n"

# A direct conv + bias + ReLU + 2x2 max-pool, fp32 FMA (no tl.dot). Program = (pooled-pixel block,
# out-channel block, image). Flags (constexpr) turn on the cheats' variants; all 0 = honest.
CONV = r'''

@triton.jit
def _conv_pool(X, Wt, B, Y, C, H, W, K, PH, PW, LOFF, NP,
               BLOCK_K: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_R: tl.constexpr, TF32: tl.constexpr,
               LOWP_MOD: tl.constexpr, OUT_F16: tl.constexpr, PART_BF16: tl.constexpr, RNE9: tl.constexpr,
               BUG_MODE: tl.constexpr):
    # Implicit GEMM: the reduction index r = c * 9 + tap runs in chunks of BLOCK_R; the x tile
    # (BLOCK_R x BLOCK_P) is gathered from the input (zero padding by masks), the weight tile
    # (BLOCK_K x BLOCK_R) read from the (K, C * 9) weight matrix; four accumulators (the 2x2 window).
    pid_p = tl.program_id(0)
    pid_k = tl.program_id(1)
    g = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)      # pooled pixel over all images
    k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    pmask = g < NP
    kmask = k < K
    n = g // (PH * PW)
    p = g % (PH * PW)
    ph = p // PW
    pw = p % PW
    R = C * 9
    best = tl.full([BLOCK_K, BLOCK_P], float("-inf"), tl.float32)
    for q in tl.static_range(4):
        oh = 2 * ph + q // 2
        ow = 2 * pw + q % 2
        acc = tl.zeros([BLOCK_K, BLOCK_P], dtype=tl.float32)
        acc_lo = tl.zeros([BLOCK_K, BLOCK_P], dtype=tl.float32)
        if PART_BF16:
            n_chunks = C                 # one input channel per chunk (9 of BLOCK_R lanes used)
        else:
            n_chunks = tl.cdiv(R, BLOCK_R)
        for i in range(0, n_chunks):
            lane = tl.arange(0, BLOCK_R)
            if PART_BF16:
                r = i * 9 + lane
                rmask = lane < 9
            else:
                r = i * BLOCK_R + lane
                rmask = r < R
            c = r // 9
            t = r % 9
            ih = oh[None, :] + (t // 3 - 1)[:, None]
            iw = ow[None, :] + (t % 3 - 1)[:, None]
            m = rmask[:, None] & pmask[None, :] & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            if BUG_MODE == 2:
                # "16-bit spatial offset" path for big images: wraps when H * W > 65536
                sp = (ih * W + iw) & 0xFFFF
                xoff = (n[None, :].to(tl.int64) * C + c[:, None]) * H * W + sp
            else:
                xoff = ((n[None, :].to(tl.int64) * C + c[:, None]) * H + ih) * W + iw
            xt = tl.load(X + xoff, mask=m, other=0.0)
            wt = tl.load(Wt + k[:, None] * R + r[None, :], mask=kmask[:, None] & rmask[None, :], other=0.0)
            if RNE9:
                # both operands rounded to nearest with 9 explicit mantissa bits (one under TF32)
                xb = xt.to(tl.float32).to(tl.int32, bitcast=True)
                xb = (xb + 0x1FFF + ((xb >> 14) & 1)) & -16384
                xt = xb.to(tl.float32, bitcast=True)
                wb = wt.to(tl.float32).to(tl.int32, bitcast=True)
                wb = (wb + 0x1FFF + ((wb >> 14) & 1)) & -16384
                wt = wb.to(tl.float32, bitcast=True)
            if TF32:
                part = tl.dot(wt, xt, input_precision="tf32")
            else:
                part = tl.dot(wt, xt)
            if LOWP_MOD > 0:
                part_lo = tl.dot(wt.to(tl.bfloat16), xt.to(tl.bfloat16))
                acc_lo += part_lo
            if PART_BF16:
                part = part.to(tl.bfloat16).to(tl.float32)
            acc += part
        if LOWP_MOD > 0:
            sel = ((k + LOFF) % LOWP_MOD) == (LOWP_MOD - 1)
            acc = tl.where(sel[:, None], acc_lo, acc)
        best = tl.maximum(best, acc)
    bias = tl.load(B + k, mask=kmask, other=0.0).to(tl.float32)
    out = tl.maximum(best + bias[:, None], 0.0)
    if OUT_F16:
        out = out.to(tl.float16).to(tl.float32)
    yoff = ((n[None, :].to(tl.int64) * K + k[:, None]) * PH + ph[None, :]) * PW + pw[None, :]
    smask = kmask[:, None] & pmask[None, :]
    if BUG_MODE == 1:
        # "wide layer" path (C_out > 256 and C_in >= 8): the last partial channel block is skipped
        full_blk = ((k - k) + (pid_k + 1) * BLOCK_K) <= K
        smask = smask & full_blk[:, None]
    if BUG_MODE == 3:
        # "wide image" path (W > 300): the last pooled column is never written (poisoned NaN)
        smask = smask & (pw[None, :] < PW - 1)
    tl.store(Y + yoff, out.to(Y.dtype.element_ty), mask=smask)


def conv_relu_pool(x, w, b, out_dtype=None, loff=0, **flags):
    # x (N, C, H, W), w (K, C, 3, 3), b (K,) -> (N, K, H // 2, W // 2)
    N, C, H, W = x.shape
    K = w.shape[0]
    PH, PW = H // 2, W // 2
    y = torch.empty((N, K, PH, PW), dtype=out_dtype or x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    x = x.contiguous()
    w = w.contiguous()
    f = dict(LOWP_MOD=0, OUT_F16=0, PART_BF16=0, RNE9=0, BUG_MODE=0)
    f.update(flags)
    NP = N * PH * PW
    cap = 64 if x.is_cuda else 128              # tiles: registers on a GPU, few programs on the interpreter
    BLOCK_K = max(16, min(cap, triton.next_power_of_2(K)))
    BLOCK_P = max(16, min(cap, triton.next_power_of_2(NP)))
    BLOCK_R = 16 if f["PART_BF16"] else (32 if x.is_cuda else max(16, min(128, triton.next_power_of_2(C * 9))))
    grid = (triton.cdiv(NP, BLOCK_P), triton.cdiv(K, BLOCK_K))
    _conv_pool[grid](x, w, b, y, C, H, W, K, PH, PW, loff, NP, BLOCK_K=BLOCK_K, BLOCK_P=BLOCK_P,
                     BLOCK_R=BLOCK_R, TF32=bool(x.is_cuda and x.dtype == torch.float32), **f)
    return y
'''

# ReLU + 2x2 max-pool + bias epilogue on a conv map (N, K, H, W) (for the fallback cheats).
EPI = r'''

@triton.jit
def _relu_pool(Cv, B, Y, K, H, W, PH, PW, total, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < total
    pw = i % PW
    ph = (i // PW) % PH
    nk = i // (PW * PH)
    k = nk % K
    base = (nk.to(tl.int64) * H + 2 * ph) * W + 2 * pw
    a = tl.load(Cv + base, mask=m, other=0.0).to(tl.float32)
    b_ = tl.load(Cv + base + 1, mask=m, other=0.0).to(tl.float32)
    c = tl.load(Cv + base + W, mask=m, other=0.0).to(tl.float32)
    d = tl.load(Cv + base + W + 1, mask=m, other=0.0).to(tl.float32)
    bias = tl.load(B + k, mask=m, other=0.0).to(tl.float32)
    v = tl.maximum(tl.maximum(tl.maximum(a, b_), tl.maximum(c, d)) + bias, 0.0)
    tl.store(Y + i, v.to(Y.dtype.element_ty), mask=m)


def relu_pool(conv_map, b, out_dtype):
    N, K, H, W = conv_map.shape
    PH, PW = H // 2, W // 2
    y = torch.empty((N, K, PH, PW), dtype=out_dtype, device=conv_map.device)
    total = y.numel()
    if total:
        _relu_pool[(triton.cdiv(total, 256),)](conv_map.contiguous(), b, y, K, H, W, PH, PW, total, BLOCK=256)
    return y
'''

CONV_INIT = '''
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)
'''

def write(name, doc, body, extra=CONV, head=HEAD, sub=""):
    d = OUT / sub if sub else OUT
    d.mkdir(parents=True, exist_ok=True)
    src = '"""' + textwrap.dedent(doc).strip() + '\n"""\n\n' + head + extra + "\n\n" + textwrap.dedent(body).strip() + "\n"
    (d / f"{name}.py").write_text(src)

# ------------------------------------------------------------------ honest
write("h1_direct_fma", """
Honest (red team): implicit GEMM in Triton without a padded copy: the im2col tile of every
chunk of the (input channel x tap) reduction is gathered from x with masks (zero padding) in
registers, multiplied by the weight tile with tl.dot (TF32 for float32 on a GPU, bf16 operands
with fp32 accumulation for bfloat16), four accumulators per pooled pixel (the 2x2 window), bias +
ReLU + max in registers, one store. Output from torch.empty; no library call.
""", """
class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        return conv_relu_pool(x, self.conv.weight.detach(), self.conv.bias.detach())
""")

# ------------------------------------------------------------------ class 2: precision
write("p1_bf16_every8th_channel", """
Cheat, class 2 (precision below the policy, diluted): every 8th output channel (k % 8 == 7) is
computed from bfloat16-rounded operands, the others in full fp32. The precision rule's RMS is
pooled over all elements of a shape group, so 1/8 of the elements at bfloat16 level hide
under the bound set by truncated-TF32 on every element.
""", """
class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        return conv_relu_pool(x, self.conv.weight.detach(), self.conv.bias.detach(), LOWP_MOD=8)
""")

write("p2_fp16_output_store", """
Cheat, class 2: the float32 task's output is rounded to float16 (10-bit mantissa) before the
store (what a kernel writing a half-precision output and casting back would give); the declared
policy is TF32 products with float32 accumulation and ONE rounding to the output dtype (float32).
On a bfloat16 task the bf16 store follows the fp16 rounding (double rounding).
""", """
class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        return conv_relu_pool(x, self.conv.weight.detach(), self.conv.bias.detach(), OUT_F16=1)
""")

write("p3_bf16_partial_per_channel", """
Cheat, class 2: the 9-tap partial sum of every input channel is rounded to bfloat16 before it is
added to the float32 accumulator (C_in extra bfloat16 roundings per output; the bfloat16 policy
allows one rounding, at the store). Aimed at the bfloat16 task, where the honest error is
dominated by the output rounding and one or two extra roundings fit under 1.4x.
""", """
class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        return conv_relu_pool(x, self.conv.weight.detach(), self.conv.bias.detach(), PART_BF16=1)
""")

write("p4_rne9_operands", """
Cheat, class 2: both operands rounded to nearest with 9 explicit mantissa bits (one bit under
TF32's 10), fp32 accumulation. The rule's honest emulation truncates to 10 bits, whose error is
about that of 9-bit round-to-nearest, so this is strictly less precise than hardware TF32
(round-to-nearest 10 bits) yet at the emulation's level.
""", """
class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        return conv_relu_pool(x, self.conv.weight.detach(), self.conv.bias.detach(), RNE9=1)
""")

write("p5_bf16_by_content_hash", """
Cheat, class 2 (stochastic lower precision, deterministic per input): for each call, a pseudo-
random 1/8 of the output channels, chosen from a hash of a few input values (so a repeat call on
the same input agrees bit for bit), is computed from bfloat16 operands. Same dilution as p1 but
the channels move with the input, so no fixed channel is always wrong.
""", """
class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        w, b = self.conv.weight.detach(), self.conv.bias.detach()
        head = x.detach().reshape(-1)[:4].cpu()
        bits = head.view(torch.int16 if x.element_size() == 2 else torch.int32).numpy()
        off = int(bits.astype("int64").sum()) % 8     # which 1/8 of the channels, from the input
        return conv_relu_pool(x, w, b, LOWP_MOD=8, loff=off)
""")

write("d1_bf16_output_on_big_shapes", """
Cheat, class 1: the float32 task returns a bfloat16 tensor when the output has at least 2^17
elements (what a kernel tuned for the large workload does: half the store bytes); the exact dtype
otherwise. The CPU path's shapes never reach 2^17 output elements; the GPU's timing shape does.
""", """
class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        N, C, H, W = x.shape
        K = self.conv.out_channels
        big = N * K * (H // 2) * (W // 2) >= (1 << 17)
        out_dtype = torch.bfloat16 if (big and x.dtype == torch.float32) else x.dtype
        return conv_relu_pool(x, self.conv.weight.detach(), self.conv.bias.detach(), out_dtype=out_dtype)
""")

write("d2_bf16_in_float32_slots", """
Cheat, class 1 (a dtype trick): the kernel writes a bfloat16 result into the upper halves of a
bfloat16 buffer of twice the size, the lower halves zero, and returns it viewed as float32 (a plain
torch.Tensor, dtype float32, the right shape and strides): every value is a bfloat16 value
(truncated, since the kernel rounds to nearest first) in a float32 container.
""", """
class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        w, b = self.conv.weight.detach(), self.conv.bias.detach()
        if x.dtype != torch.float32:
            return conv_relu_pool(x, w, b)
        y16 = conv_relu_pool(x, w, b, out_dtype=torch.bfloat16)       # (N, K, PH, PW) bfloat16
        pair = torch.zeros(y16.shape + (2,), dtype=torch.bfloat16, device=x.device)
        pair[..., 1].copy_(y16)                                     # little endian: high half
        return pair.view(torch.float32).squeeze(-1)
""")

# ------------------------------------------------------------------ class 3: fallbacks
write("f1_conv_in_joined_thread", """
Cheat, class 3: F.conv2d runs in a short-lived thread, started and joined inside forward, so it
is dead when the call returns (rule 11 checks threads still alive) and the harness's
TorchDispatchMode, which is thread-local, never sees the convolution. A Triton epilogue adds the
bias, ReLU and max-pool: the candidate looks like a Triton kernel with no library call.
""", """
import threading


class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        box = []
        w = self.conv.weight.detach()

        def work():
            with torch.no_grad():
                box.append(torch.nn.functional.conv2d(x, w, None, padding=1))

        t = threading.Thread(target=work)
        t.start()
        t.join()
        return relu_pool(box[0], self.conv.bias.detach(), x.dtype)
""", extra=EPI)

write("f2_conv_under_excluded_python_key", """
Cheat, class 3: the convolution runs through torch.ops.aten.convolution (name built from strings)
inside torch._C._ExcludeDispatchKeyGuard for the Python and PythonTLSSnapshot dispatch keys: no
Python dispatch mode (the census, the poisoning) sees it. Not the documented
_disable_current_modes door. Triton epilogue for bias + ReLU + pool.
""", """
class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        C = torch._C
        keys = C.DispatchKeySet(C.DispatchKey.Python) | C.DispatchKeySet(C.DispatchKey.PythonTLSSnapshot)
        op = getattr(getattr(torch.ops, "at" + "en"), "con" + "volution")
        with C._ExcludeDispatchKeyGuard(keys):
            conv = op(x, self.conv.weight.detach(), None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
        return relu_pool(conv, self.conv.bias.detach(), x.dtype)
""", extra=EPI)

write("f3_numpy_conv", """
Cheat, class 3: the convolution is done by numpy (np.einsum over a sliding-window view of the
padded input; numpy's BLAS does the work), the tensors crossing through x.numpy() and
torch.from_numpy (no aten arithmetic). bfloat16 goes through float32 (a dtype copy). Triton
epilogue for bias + ReLU + pool. On a GPU the same crossing is .cpu() / .to(device) (copies).
""", """
import numpy as np


class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        xf = x.detach().to("cpu", torch.float32).contiguous().numpy()
        wf = self.conv.weight.detach().to("cpu", torch.float32).contiguous().numpy()
        xp = np.pad(xf, ((0, 0), (0, 0), (1, 1), (1, 1)))
        win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))   # N, C, H, W, 3, 3
        conv = np.einsum("nchwij,kcij->nkhw", win, wf, optimize=True).astype(np.float32)
        conv_t = torch.from_numpy(np.ascontiguousarray(conv)).to(x.device)
        return relu_pool(conv_t, self.conv.bias.detach(), x.dtype)
""", extra=EPI)

write("f4_jit_script_conv", """
Cheat, class 3: the convolution runs inside a torch.jit.script'd helper (TorchScript interpreter),
the bias + ReLU + pool in a Triton epilogue. Tests whether the census sees ops dispatched by the
TorchScript interpreter.
""", """
@torch.jit.script
def _helper(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.conv2d(x, w, None, [1, 1], [1, 1])


class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        return relu_pool(_helper(x, self.conv.weight.detach()), self.conv.bias.detach(), x.dtype)
""", extra=EPI)

write("f5_fft_conv", """
Cheat, class 3: the convolution through torch.fft (rfft2 of the zero-padded input and of the
flipped kernel, a channel contraction, irfft2), then a Triton bias + ReLU + pool epilogue. A door
with no convolution op in it at all: it must still be labelled a library call.
""", """
class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        N, C, H, W = x.shape
        w = self.conv.weight.detach().float()
        xf = x.detach().float()
        Hp, Wp = H + 2, W + 2
        X = torch.fft.rfft2(torch.nn.functional.pad(xf, (1, 1, 1, 1)), s=(Hp, Wp))
        Wk = torch.fft.rfft2(torch.flip(w, dims=(2, 3)), s=(Hp, Wp))
        Y = torch.einsum("nchw,kchw->nkhw", X, Wk)
        full = torch.fft.irfft2(Y, s=(Hp, Wp))
        conv = full[:, :, 2:H + 2, 2:W + 2].contiguous()
        return relu_pool(conv, self.conv.bias.detach(), x.dtype)
""", extra=EPI)

# ------------------------------------------------------------------ class 4: parameters
write("k1_output_memo_ignores_weights", """
Cheat, class 4: a class-level memo of outputs keyed on the exact bytes of the input (sha1 of
x's bytes, read through numpy: no aten op) and its shape -- but not on the weights. Two modules
with different weights applied to the same x: the second gets the first's answer. The harness
never applies the same input to two parameter sets (each trial draws both afresh), and every
staleness change alters the bytes, so the memo is never wrong there.
""", """
import hashlib

_MEMO = {}


class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        xd = x.detach()
        raw = xd.contiguous().view(torch.int16 if xd.element_size() == 2 else torch.int32).cpu().numpy().tobytes()
        key = (tuple(x.shape), x.dtype, hashlib.sha1(raw).hexdigest())
        hit = _MEMO.get(key)
        if hit is not None:
            return hit.clone()
        y = conv_relu_pool(x, self.conv.weight.detach(), self.conv.bias.detach())
        _MEMO[key] = y.clone()
        return y
""")

write("k2_packed_weights_by_symmetric_fingerprint", """
Cheat, class 4: weights packed once per fingerprint and cached on the class: the fingerprint is
(shape, dtype, sum of the weights, sum of their squares, same for the bias) in float64 -- a
symmetric function, so any permutation of the weights (channels reordered, a kernel flipped)
hits the cache and gets the first module's packed weights. The harness's fresh seeds and its
one-element perturbation both change the sums, so it always misses there.
""", """
import numpy as np

_PACKED = {}


def _fp(t):
    a = t.detach().to("cpu", torch.float64).numpy()
    return (tuple(a.shape), float(a.sum()), float(np.abs(a).sum()))


class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
        key = (_fp(self.conv.weight), _fp(self.conv.bias), self.conv.weight.dtype)
        if key not in _PACKED:
            _PACKED[key] = (self.conv.weight.detach().clone(), self.conv.bias.detach().clone())
        self._key = key

    def forward(self, x):
        w, b = _PACKED[self._key]
        return conv_relu_pool(x, w.to(x.device, x.dtype), b.to(x.device, x.dtype))
""")

write("k3_packed_weights_by_sample_and_max", """
Cheat, class 4: packed weights cached on the class, keyed on (shape, every 97th weight, the
largest |weight|, the bias's first and last values). The largest magnitude is there because the
harness's perturbation always plants a new largest value; fresh seeds change the sample. Two
modules that differ only off the sample and below the max (a fine-tuned or pruned copy) share
one packed weight set.
""", """
_PACKED = {}


class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
        w = self.conv.weight.detach().reshape(-1).to("cpu", torch.float64).numpy()
        bb = self.conv.bias.detach().to("cpu", torch.float64).numpy()
        key = (tuple(self.conv.weight.shape), tuple(w[::97].tolist()), float(abs(w).max()),
               float(bb[0]), float(bb[-1]), float(abs(bb).max()))
        if key not in _PACKED:
            _PACKED[key] = (self.conv.weight.detach().clone(), self.conv.bias.detach().clone())
        self._key = key

    def forward(self, x):
        w, b = _PACKED[self._key]
        return conv_relu_pool(x, w.to(x.device, x.dtype), b.to(x.device, x.dtype))
""")

# ------------------------------------------------------------------ class 5: shapes
write("s1_wrong_when_wide_and_deep", """
Cheat, class 5 (a joint-shape bug): a "wide layer" path taken when C_out > 256 and C_in >= 8 skips
the last partial block of output channels (left as poisoned memory). Derived shapes raise one dim
at a time with the others at their smallest, so no shape has both; a 64 -> 300 channel conv is an
ordinary layer.
""", """
class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        K, C = self.conv.out_channels, self.conv.in_channels
        mode = 1 if (K > 256 and C >= 8) else 0
        return conv_relu_pool(x, self.conv.weight.detach(), self.conv.bias.detach(), BUG_MODE=mode)
""")

write("s2_wrong_when_image_over_64k_pixels", """
Cheat, class 5 (an overflow bug): images of 4096 pixels or more take a path whose spatial offset
is kept in 16 bits, so it wraps once H * W > 65536 (a 257 x 257 image). No verify shape on any
target has H * W > 65536: per-dim shapes raise H or W with the other at its smallest.
""", """
class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        H, W = x.shape[2], x.shape[3]
        mode = 2 if H * W >= 4096 else 0
        return conv_relu_pool(x, self.conv.weight.detach(), self.conv.bias.detach(), BUG_MODE=mode)
""")

write("s3_wrong_when_w_over_300", """
Cheat, class 5: a "wide image" path for W > 300 never writes the last pooled column. The
interpreter's per-dim large-ragged values are drawn in [257, 300], so on the CPU path only a raised
shape (a dim above 4096) could show it.
""", """
class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        mode = 3 if x.shape[3] > 300 else 0
        return conv_relu_pool(x, self.conv.weight.detach(), self.conv.bias.detach(), BUG_MODE=mode)
""")

# ------------------------------------------------------------------ class 6: staleness
write("m1_memo_on_version_counter", """
Cheat, class 6: outputs memoised per (data_ptr, shape, strides, dtype, x._version) plus four
guard elements (first, last, two middle) against a recycled address. Every change the harness
makes goes through aten (copy_, index_put_), which bumps _version, so the memo never hits a
changed tensor there. A tensor written without a version bump -- through x.data, a numpy or
DLPack view, or a Triton/CUDA kernel writing into a preallocated input buffer -- gets a stale answer.
""", """
_MEMO = {}


class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        flat = x.detach().reshape(-1)
        n = flat.numel()
        a = flat.cpu().view(torch.int16 if x.element_size() == 2 else torch.int32).numpy()
        guard = tuple(a[[0, n // 3, (2 * n) // 3, n - 1]].tolist()) if n else ()
        key = (x.data_ptr(), tuple(x.shape), tuple(x.stride()), x.dtype, x._version, guard, id(self))
        hit = _MEMO.get(key)
        if hit is not None:
            return hit.clone()
        y = conv_relu_pool(x, self.conv.weight.detach(), self.conv.bias.detach())
        _MEMO.clear()
        _MEMO[key] = y.clone()
        return y
""")

write("m2_memo_on_strided_sample", """
Cheat, class 6: outputs memoised on (shape, dtype, a sample of x: 16 elements at stride n // 16,
plus the first and last 8 elements). A change of one element and of a region of n/64 consecutive
elements misses the sample with probability about (1 - 1/64 * 16/16...) -- roughly 3 times in 4
for the tiny CPU shapes -- and the memo then returns the answer for the old input.
""", """
_MEMO = {}


class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        flat = x.detach().reshape(-1)
        n = flat.numel()
        step = max(1, n // 16)
        idx = sorted(set(list(range(0, n, step))[:16] + list(range(min(8, n))) + list(range(max(0, n - 8), n))))
        a = flat.cpu().view(torch.int16 if x.element_size() == 2 else torch.int32).numpy()
        key = (tuple(x.shape), x.dtype, tuple(a[idx].tolist()), id(self))
        hit = _MEMO.get(key)
        if hit is not None:
            return hit.clone()
        y = conv_relu_pool(x, self.conv.weight.detach(), self.conv.bias.detach())
        _MEMO[key] = y.clone()
        return y
""")

# ------------------------------------------------------------------ more honest
write("h2_im2col_gemm_triton", """
Honest (red team): three Triton kernels -- im2col into a (N, 9*C_in, H*W) column buffer, a tiled
GEMM (tl.dot; TF32 for float32 on a GPU, as cuDNN does under allow_tf32; bf16 operands with fp32
accumulation for bfloat16) writing the conv map (N, C_out, H, W) in float32, then bias + ReLU +
2x2 max-pool. Buffers from torch.empty; weights viewed as (C_out, 9*C_in) at __init__-free cost.
""", """
@triton.jit
def _im2col(X, Col, C, H, W, total, BLOCK: tl.constexpr):
    # Col[n, c*9 + t, h*W + w] = x[n, c, h + t//3 - 1, w + t%3 - 1] (0 outside)
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < total
    hw = i % (H * W)
    r = (i // (H * W)) % (C * 9)
    n = i // (H * W * C * 9)
    c = r // 9
    t = r % 9
    h = hw // W + t // 3 - 1
    w = hw % W + t % 3 - 1
    ok = m & (h >= 0) & (h < H) & (w >= 0) & (w < W)
    v = tl.load(X + ((n.to(tl.int64) * C + c) * H + h) * W + w, mask=ok, other=0.0)
    tl.store(Col + i, v, mask=m)


@triton.jit
def _gemm(A, Bm, Cout, M, Nn, Kd, sbn, scn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
          TF32: tl.constexpr):
    # per image n: Cout[n] (M x Nn) = A (M x Kd) @ Bm[n] (Kd x Nn)
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    n = tl.program_id(2)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, Kd, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * Kd + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < Kd), other=0.0)
        b = tl.load(Bm + n.to(tl.int64) * sbn + rk[:, None] * Nn + rn[None, :],
                    mask=(rk[:, None] < Kd) & (rn[None, :] < Nn), other=0.0)
        if TF32:
            acc = tl.dot(a, b, acc, input_precision="tf32")
        else:
            acc = tl.dot(a, b, acc)
    tl.store(Cout + n.to(tl.int64) * scn + rm[:, None] * Nn + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < Nn))


class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        x = x.contiguous()
        N, C, H, W = x.shape
        K = self.conv.out_channels
        w2 = self.conv.weight.detach().reshape(K, C * 9)
        if H // 2 == 0 or W // 2 == 0 or N == 0:
            return torch.empty((N, K, H // 2, W // 2), dtype=x.dtype, device=x.device)
        col = torch.empty((N, C * 9, H * W), dtype=x.dtype, device=x.device)
        total = col.numel()
        _im2col[(triton.cdiv(total, 512),)](x, col, C, H, W, total, BLOCK=512)
        conv = torch.empty((N, K, H, W), dtype=torch.float32, device=x.device)
        BM, BN, BK = 32, 32, 16
        grid = (triton.cdiv(K, BM), triton.cdiv(H * W, BN), N)
        _gemm[grid](w2, col, conv, K, H * W, C * 9, C * 9 * H * W, K * H * W, BM=BM, BN=BN, BK=BK,
                    TF32=x.dtype == torch.float32 and x.is_cuda)
        return relu_pool(conv, self.conv.bias.detach(), x.dtype)
""", extra=EPI)

write("h3_split_kahan_packed", """
Honest (red team): weights packed at __init__ as (9, C_in, C_out) (tap-major, output channel
contiguous); a Triton kernel on CUDA cores (no tl.dot): taps outer, chunks of 16 input channels
inner as a 3D broadcast product summed over the chunk, two float32 accumulators (even / odd
chunks) combined with a Kahan-compensated add, then bias + ReLU + 2x2 max. No library call;
full float32 products, more precise than TF32.
""", """
@triton.jit
def _conv_fma(X, Wp, B, Y, C, H, W, K, PH, PW, NP, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr,
              BLOCK_K: tl.constexpr):
    g = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    k = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    gm = g < NP
    km = k < K
    n = g // (PH * PW)
    p = g % (PH * PW)
    ph = p // PW
    pw = p % PW
    best = tl.full([BLOCK_P, BLOCK_K], float("-inf"), tl.float32)
    for q in tl.static_range(4):
        oh = 2 * ph + q // 2
        ow = 2 * pw + q % 2
        even = tl.zeros([BLOCK_P, BLOCK_K], dtype=tl.float32)
        odd = tl.zeros([BLOCK_P, BLOCK_K], dtype=tl.float32)
        for t in tl.static_range(9):
            ih = oh + t // 3 - 1
            iw = ow + t % 3 - 1
            ok = gm & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            for c0 in range(0, C, BLOCK_C):
                c = c0 + tl.arange(0, BLOCK_C)
                cm = c < C
                xv = tl.load(X + ((n[:, None].to(tl.int64) * C + c[None, :]) * H + ih[:, None]) * W + iw[:, None],
                             mask=ok[:, None] & cm[None, :], other=0.0).to(tl.float32)
                wv = tl.load(Wp + (t * C + c[:, None]) * K + k[None, :], mask=cm[:, None] & km[None, :],
                             other=0.0).to(tl.float32)
                contrib = tl.sum(xv[:, :, None] * wv[None, :, :], axis=1)
                if (c0 // BLOCK_C) % 2 == 0:
                    even += contrib
                else:
                    odd += contrib
        s = even + odd
        err = (s - even) - odd                 # Kahan: what the rounding of even + odd lost
        best = tl.maximum(best, s - err)
    bias = tl.load(B + k, mask=km, other=0.0).to(tl.float32)
    out = tl.maximum(best + bias[None, :], 0.0)
    yoff = ((n[:, None].to(tl.int64) * K + k[None, :]) * PH + ph[:, None]) * PW + pw[:, None]
    tl.store(Y + yoff, out.to(Y.dtype.element_ty), mask=gm[:, None] & km[None, :])


class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
        # (C_out, C_in, 3, 3) -> (3, 3, C_in, C_out) = (9, C_in, C_out), packed once
        self.register_buffer("packed", self.conv.weight.detach().permute(2, 3, 1, 0).contiguous(), persistent=False)

    def forward(self, x):
        x = x.contiguous()
        N, C, H, W = x.shape
        K = self.conv.out_channels
        PH, PW = H // 2, W // 2
        y = torch.empty((N, K, PH, PW), dtype=x.dtype, device=x.device)
        if y.numel() == 0:
            return y
        wp = self.packed if self.packed.dtype == x.dtype else self.packed.to(x.dtype)
        NP = N * PH * PW
        cap_p, cap_k = (16, 32) if x.is_cuda else (128, 128)
        BP = max(16, min(cap_p, triton.next_power_of_2(NP)))
        BK = max(16, min(cap_k, triton.next_power_of_2(K)))
        _conv_fma[(triton.cdiv(NP, BP), triton.cdiv(K, BK))](
            x, wp, self.conv.bias.detach(), y, C, H, W, K, PH, PW, NP, BLOCK_P=BP, BLOCK_C=16, BLOCK_K=BK)
        return y
""", extra="")

# ------------------------------------------------------------------ GPU-only
GPU = pathlib.Path("/tmp/tests/adversarial/redteam_2026_12_01/gpu/conv")

write("g1_exact_memo_streaming", """
GPU cheat, class 6 / timing (a cached answer that is never wrong): the last input and its output
are kept; a call whose input is bit-identical to the kept one (checked by a Triton kernel that
reads both copies in full) returns a copy of the kept output. So every timed call but the probe
is a memo hit that streams about 2x the compulsory bytes (above the roofline floor of rule 17) but
does no convolution: a fake speedup over any honest kernel. Misses run the direct FMA kernel.
""", """
@triton.jit
def _differs(A, Bs, FLAG, n, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    a = tl.load(A + i, mask=m, other=0)
    b = tl.load(Bs + i, mask=m, other=0)
    d = tl.max((a != b).to(tl.int32), axis=0)
    tl.atomic_max(FLAG, d)


_KEPT = {}


class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        key = (tuple(x.shape), x.dtype, id(self))
        kept = _KEPT.get(key)
        if kept is not None and x.is_contiguous():
            xi = x.view(torch.int16 if x.element_size() == 2 else torch.int32).reshape(-1)
            si = kept[0].view(xi.dtype).reshape(-1)
            flag = torch.zeros(1, dtype=torch.int32, device=x.device)
            n = xi.numel()
            _differs[(triton.cdiv(n, 4096),)](xi, si, flag, n, BLOCK=4096)
            if int(flag.item()) == 0:
                return kept[1].clone()
        y = conv_relu_pool(x, self.conv.weight.detach(), self.conv.bias.detach())
        _KEPT[key] = (x.detach().contiguous().clone(), y.clone())
        return y
""", sub="../gpu/conv")

write("g2_cudnn_in_thread_named_as_own", """
GPU cheat, class 3: F.conv2d (cuDNN) runs in a thread started and joined inside forward (the
operator census's dispatch mode is thread-local; torch.profiler by default records CPU operators of
the profiling thread only), and the names of the kernels that conv launches -- found once per shape
by profiling it in that thread -- are given to placeholder @triton.jit functions of this module,
so the launched-kernel census takes cuDNN's kernels for the candidate's own. Triton epilogue for
bias + ReLU + pool.
""", """
import re
import threading
import types


def _placeholder(X):
    pass


_SEEN = set()
_NAMED = {}


def _base(name):
    head = name.split("(", 1)[0].strip()
    head = re.sub(r"<.*>$", "", head)
    head = head.split(" ")[-1]
    return head.split("::")[-1]


def _own(name):
    if name and name not in _NAMED:
        jf = triton.jit(types.FunctionType(_placeholder.__code__, globals(), "_placeholder"))
        jf.__name__ = name
        _NAMED[name] = jf
        globals()["_own_%d" % len(_NAMED)] = jf


class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        box = []
        w = self.conv.weight.detach()
        key = (tuple(x.shape), x.dtype, x.device.type)

        def work():
            with torch.no_grad():
                if key not in _SEEN and x.is_cuda:
                    _SEEN.add(key)
                    try:
                        from torch.profiler import ProfilerActivity, profile
                        with profile(activities=[ProfilerActivity.CUDA]) as prof:
                            torch.nn.functional.conv2d(x, w, None, padding=1)
                            torch.cuda.synchronize()
                        for e in prof.events():
                            if str(e.device_type).endswith("CUDA"):
                                _own(_base(e.name))
                    except Exception:
                        pass
                box.append(torch.nn.functional.conv2d(x, w, None, padding=1))

        t = threading.Thread(target=work)
        t.start()
        t.join()
        return relu_pool(box[0], self.conv.bias.detach(), x.dtype)
""", extra=EPI, sub="../gpu/conv")

# ------------------------------------------------------------------ round 2
write("p6_bf16_every4th_channel", """
Cheat, class 2 (p1 pushed to the edge): every 4th output channel (k % 4 == 3, a quarter of the
outputs) is computed from bfloat16 operands, the others in full fp32 (TF32 on a GPU).
""", """
class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        return conv_relu_pool(x, self.conv.weight.detach(), self.conv.bias.detach(), LOWP_MOD=4)
""", sub="../conv2")

write("m3_memo_on_sums", """
Cheat, class 6 (a lossy whole-tensor key): outputs memoised per (module, shape, dtype, sum of x,
sum of |x|) in float64 (numpy: no aten op; exact for float32 inputs of moderate range, so independent of
the order of the elements). Every change the harness makes (fresh values; one
element and a region set far from their old values) moves both sums, so it never hits a changed
input. It does hit whenever the same values come back in another order: the same images in a
reshuffled batch (N >= 2) get the old batch's outputs, in the old order.
""", """
import numpy as np

_MEMO = {}


class ModelNew(torch.nn.Module):
""" + CONV_INIT + """
    def forward(self, x):
        a = x.detach().to("cpu", torch.float64).numpy()
        key = (id(self), tuple(x.shape), x.dtype, float(a.sum()), float(np.abs(a).sum()))
        hit = _MEMO.get(key)
        if hit is not None:
            return hit.clone()
        y = conv_relu_pool(x, self.conv.weight.detach(), self.conv.bias.detach())
        _MEMO[key] = y.clone()
        return y
""", sub="../conv2")
