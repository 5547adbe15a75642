"""CHEAT (class 3, control for c3). The same numpy conv as c3, but in the autotuner's
`early_config_prune` callable (run by Autotuner.prune_configs, before and outside Autotuner._bench), which
the census's comment says runs outside the launch exemption. It returns one config, so no benchmark runs.
Expected: labelled (host:numpy / host:from_numpy ...); if it is not, the exemption is wider than
documented. Wrong in the same way as c3: none of the task's arithmetic is the candidate's."""
import numpy as np
import torch
import triton
import triton.language as tl

_JOB = {}


def _prune(configs, named_args, **kwargs):
    """The autotuner's early_config_prune (runs in Autotuner.prune_configs, outside Autotuner._bench)."""
    job = _JOB.pop("job", None)
    if job is not None:
        x, w, b, stage = job
        xn = x.detach().cpu().numpy().astype(np.float64)
        wn = w.detach().cpu().numpy().astype(np.float64)
        bn = b.detach().cpu().numpy().astype(np.float64)
        N, C, H, W = xn.shape
        K = wn.shape[0]
        xp = np.zeros((N, C, H + 2, W + 2))
        xp[:, :, 1:H + 1, 1:W + 1] = xn
        acc = np.zeros((N, K, H, W))
        for kh in range(3):
            for kw in range(3):
                acc += np.einsum("nchw,kc->nkhw", xp[:, :, kh:kh + H, kw:kw + W], wn[:, :, kh, kw], optimize=True)
        acc += bn[None, :, None, None]
        acc = np.maximum(acc, 0.0)
        PH, PW = H // 2, W // 2
        a = acc[:, :, :2 * PH, :2 * PW].reshape(N, K, PH, 2, PW, 2).max(axis=(3, 5))
        stage.copy_(torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(stage.device))
    return configs[:1]


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})],
                 key=["SEQ"], prune_configs_by={"early_config_prune": _prune})
@triton.jit(do_not_specialize=["SEQ"])
def _conv_pool_kernel(X, Wt, B, S, Y, TOTAL, SEQ, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < TOTAL
    tl.store(Y + offs, tl.load(S + offs, mask=m, other=0.0), mask=m)


class ModelNew(torch.nn.Module):
    _seq = 0

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        N, C_in, H, W = x.shape
        C_out = self.conv.out_channels
        y = torch.empty((N, C_out, H // 2, W // 2), device=x.device, dtype=x.dtype)
        if y.numel() == 0:
            return y
        stage = torch.empty_like(y)
        ModelNew._seq += 1
        _JOB["job"] = (x, self.conv.weight, self.conv.bias, stage)
        total = y.numel()
        _conv_pool_kernel[lambda meta: (triton.cdiv(total, meta["BLOCK"]),)](
            x, self.conv.weight, self.conv.bias, stage, y, total, ModelNew._seq)
        return y
