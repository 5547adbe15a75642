# Sourced by the bench/*.sh device scripts (from the repo root, after the .whl install line of
# ../shared/device/README.md): the shared compile cache, unbuffered logs, the checkout on the path,
# and bubblewrap unpacked from the carried .deb folder when the GPU machine has none.
export KERNELSYNTH_CACHE=${KERNELSYNTH_CACHE:-/tmp/kcache} PYTHONUNBUFFERED=1
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD
if ! command -v bwrap >/dev/null && [ -z "${KERNELSYNTH_BWRAP:-}" ] && ls .deb/bubblewrap_*.deb >/dev/null 2>&1; then
  dpkg -x .deb/bubblewrap_*.deb /tmp/pkg && export KERNELSYNTH_BWRAP=/tmp/pkg/usr/bin/bwrap
fi
