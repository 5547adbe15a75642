"""What ca_f1 (float16 tensor cores on causal_attention float32) gets wrong: inputs outside
float16's range, which no probe of the spec reaches. Max error over max |ref| against the float64
reference, for ca_f1, the exact float32 ca_h1-style flash (ca_y1's kernel without its layout) and
the TF32-truncation emulation the precision rule uses (operands truncated to 10 bits).

    TRITON_INTERPRET=1 PYTHONPATH=$PWD python tests/adversarial/redteam_s26/demo_fp16_range.py
"""
import torch
import torch.nn.functional as F
from kernelsynth.loading import import_file
from kernelsynth.verify.precision import truncate_mantissa

D = "tests/adversarial/redteam_s26/causal_attention/"
f1 = import_file(D + "ca_f1_fp16_tensor_cores.py").ModelNew()
g = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(1, 2, 37, 128, generator=g) for _ in range(3))
for name, sq, sv in (("ordinary", 1.0, 1.0), ("probe x8 (the spec's range check)", 8.0, 8.0),
                     ("v x 2^-16", 1.0, 2.0 ** -16), ("v x 2^-22", 1.0, 2.0 ** -22), ("v x 2^16", 1.0, 2.0 ** 16),
                     ("q, k x 2^-8", 2.0 ** -8, 1.0), ("q, k x 2^5", 2.0 ** 5, 1.0)):
    a, b, c = q * sq, k * sq, v * sv
    ref = F.scaled_dot_product_attention(a.double(), b.double(), c.double(), is_causal=True)
    emu = F.scaled_dot_product_attention(*(truncate_mantissa(t, 10) for t in (a, b, c)), is_causal=True)
    out = f1(a, b, c)
    rel = lambda o: ((o.double() - ref).abs().max() / ref.abs().max()).item()
    print(f"{name:36s} ca_f1 {rel(out):.3e}  TF32 emulation {rel(emu):.3e}  non-finite in ca_f1: "
          f"{(~torch.isfinite(out)).sum().item()}")
