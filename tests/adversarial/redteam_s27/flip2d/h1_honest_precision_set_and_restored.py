"""HONEST (false rejection?): a flip whose forward raises the float32 matmul precision for its own
work and puts it back with the documented pattern -- old = torch.get_float32_matmul_precision();
torch.set_float32_matmul_precision('high'); try: ... finally: torch.set_float32_matmul_precision(old).
VERIFICATION.md rule 13 says a kernel may change a setting inside its call if it restores it before
returning. On torch >= 2.9 the legacy setter writes through to the fp32_precision settings, and
setting 'highest' back leaves them at 'ieee' where they were 'none'."""
import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        old = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision("high")
        try:
            return torch.flip(x, dims=[1])
        finally:
            torch.set_float32_matmul_precision(old)
