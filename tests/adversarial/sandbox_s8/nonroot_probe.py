"""Attack (a probe through ``Sandbox.command``, not an engine run): what a worker of a **non-root**
run can do that a root run's worker cannot -- a non-root worker keeps the user's uid.

An engine run as ``nobody`` is not possible on this machine (Python lives under root's 0700
home), so this script builds the worker's bwrap command line with
``kernelsynth.sandbox.Sandbox.command`` and the scrubbed environment
(``worker_environment``), as ``_Worker`` does, and runs a probe in it: (1) fill bwrap's own
``/dev`` (``--dev`` makes a tmpfs with no size limit, owned by the sandbox's uid), (2) read the
user's 0600 Hugging Face token under ``HF_HOME`` outside the home and a 0644 service-account key
named by ``GOOGLE_APPLICATION_CREDENTIALS``. Run it as the user (root plants the files for it):

    mkdir -p /srv/sb8n-hf /srv/sb8n-gcp && echo hf_sb8fileTOKEN0123456789 > /srv/sb8n-hf/token \
      && chmod 600 /srv/sb8n-hf/token && chown -R nobody /srv/sb8n-hf \
      && echo '{"private_key": "sb8-gcp-secret"}' > /srv/sb8n-gcp/sa.json && chmod 644 /srv/sb8n-gcp/sa.json
    cd /tmp && runuser -u nobody -- env HOME=/nonexistent HF_HOME=/srv/sb8n-hf \
      GOOGLE_APPLICATION_CREDENTIALS=/srv/sb8n-gcp/sa.json PYTHONPATH=<checkout> /usr/bin/python3 \
      <checkout>/tests/adversarial/sandbox_s8/nonroot_probe.py

Success (GOT THROUGH): ``/dev: wrote 300 MiB``; the token's or the key's text. Contained:
``/dev: Read-only file system``; the files ``Permission denied``.
"""
import os
import subprocess
import sys

from kernelsynth.sandbox import Sandbox, worker_environment

PROBE = r'''
import os
out = {"uid": os.getuid()}
n = 0
try:
    with open("/dev/sb8-fill", "wb") as f:
        while n < (300 << 20):
            f.write(b"x" * (1 << 20))
            n += 1 << 20
    out["/dev"] = f"wrote {n >> 20} MiB"
except OSError as e:
    out["/dev"] = f"{e.strerror} after {n >> 20} MiB"
for t in ("/srv/sb8n-hf/token", "/srv/sb8n-gcp/sa.json"):
    try:
        out[t] = open(t).read().strip()
    except OSError as e:
        out[t] = e.strerror
print(out)
'''

if __name__ == "__main__":
    import kernelsynth
    print("kernelsynth from", os.path.dirname(kernelsynth.__file__))
    sb = Sandbox({"mode": "on", "tmp_mb": 64, "fsize_mb": 512})
    cmd = sb.command([sys.executable, "-c", PROBE], sb.limits())
    p = subprocess.run(cmd, env=worker_environment(dict(os.environ), {}, "/tmp/home"), capture_output=True,
                       text=True, timeout=120)
    print(p.returncode, p.stdout.strip(), p.stderr[-300:])
