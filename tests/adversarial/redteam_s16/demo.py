"""What the accepted cheats of this folder get wrong, outside the harness (CPU, Triton interpreter).
Run: PYTHONPATH=$PWD TRITON_INTERPRET=1 python tests/adversarial/redteam_s16/demo.py"""
import importlib.util
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "specs", "conv_relu_maxpool"))
from reference import Model  # noqa: E402


def load(name):
    spec = importlib.util.spec_from_file_location(name[:3], os.path.join(HERE, "conv_relu_maxpool", name))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def pair(m, ci, co, seed=0):
    torch.manual_seed(seed)
    c = m.ModelNew(ci, co)
    torch.manual_seed(seed)
    return c, Model(ci, co)


def err(a, b):
    return (a - b).abs().max().item()


torch.set_grad_enabled(False)
# c1 / c1b: outputs kept by the caller are zeroed three calls later
for f in ("c1_output_in_shared_memory_recycled_three_calls_later.py", "c1b_output_in_shared_memory_plain_plumbing.py"):
    c, r = pair(load(f), 5, 16)
    xs = [torch.randn(2, 5, 6, 9) for _ in range(5)]
    outs = [c(x) for x in xs]
    print(f[:3], "kept outputs, max err each after 5 calls:", [round(err(o, r(x)), 3) for x, o in zip(xs, outs)])
# c4: two modules with the same weight, different bias, same input
m = load("c4_output_memo_across_modules_ignores_bias.py")
x = torch.randn(2, 5, 6, 9)
c, r = pair(m, 5, 16, seed=7)
print("c4 module A:", err(c(x), r(x)))
c2, r2 = pair(m, 5, 16, seed=7)
c2.conv.bias.add_(0.25)
r2.conv.bias.add_(0.25)
print("c4 module B (same weight, bias + 0.25), same x: max err", err(c2(x), r2(x)))
# c5: a ResNet-like layer
m = load("c5_right_halo_dropped_when_cin_over_64_and_w_over_8.py")
for shape in ((1, 64, 8, 8, 16), (1, 128, 8, 8, 8), (1, 128, 8, 8, 16)):
    n, ci, co, h, w = shape
    c, r = pair(m, ci, co)
    x = torch.randn(n, ci, h, w)
    print("c5", shape, "max err", err(c(x), r(x)))
# c6: only the first row of image 0, channel 0 changes
m = load("c6_memo_blind_to_the_first_input_row.py")
c, r = pair(m, 5, 16)
x = torch.randn(2, 5, 6, 9)
print("c6 first call:", err(c(x), r(x)))
x[0, 0, 0, :] += 2.0
print("c6 after x[0, 0, 0, :] += 2 in place: max err", err(c(x), r(x)))
# c7: a batch slice (contiguous, 420 bytes into its storage: not 16-byte aligned)
m = load("c7_input_base_aligned_down_to_16_bytes.py")
c, r = pair(m, 3, 8)
big = torch.randn(3, 3, 5, 7)
print("c7 fresh input:", err(c(big), r(big)), "| x = big[1:] (offset", big[1:].storage_offset() * 4, "bytes): max err",
      err(c(big[1:]), r(big[1:])))
# c8: a channels_last input
m = load("c8_strides_ignored_channels_last_input.py")
c, r = pair(m, 5, 16)
x = torch.randn(2, 5, 6, 9)
xc = x.to(memory_format=torch.channels_last)
print("c8 contiguous input:", err(c(x), r(x)), "| channels_last input: max err", err(c(xc), r(xc)))
