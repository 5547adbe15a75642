"""The two ways a candidate fails verification, as exceptions (no torch: the parent reads them)."""


class VerificationFailure(Exception):
    """A candidate's output is wrong; the message says where and how."""


class TamperingError(Exception):
    """The candidate replaced a function of torch, triton or the harness (checked by identity).
    The worker that ran it is not reused."""
