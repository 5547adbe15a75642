# Sourced by the bench/*.sh device scripts (from the repo root, after the .whl install line of
# ../shared/device/README.md): the shared compile cache, unbuffered logs, the checkout on the path,
# and bubblewrap unpacked from the carried .deb folder when the GPU machine has none.
export KERNELSYNTH_CACHE=${KERNELSYNTH_CACHE:-/tmp/kcache} PYTHONUNBUFFERED=1
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD
if ! command -v bwrap >/dev/null && [ -z "${KERNELSYNTH_BWRAP:-}" ] && ls .deb/bubblewrap_*.deb >/dev/null 2>&1; then
  dpkg -x .deb/bubblewrap_*.deb /tmp/pkg && export KERNELSYNTH_BWRAP=/tmp/pkg/usr/bin/bwrap
fi
# HW: the hw= config for the lent card (hw=h200 stops at once on another GPU), exported for the scripts
# these calls start; a caller's own HW wins.
if [ -z "${HW:-}" ]; then
  case "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" in
    *H100*) HW=h100 ;; *) HW=h200 ;;
  esac
fi
export HW
