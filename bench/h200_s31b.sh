#!/usr/bin/env bash
# Session 31's second device call, now bench/h200_s32.sh without its flip2d step and without pins (an H100 or
# H200; carry .whl, .deb; repo root, after the .whl line):
#   V9_S=150 PROFILE_S=80 END_S=585 bash bench/h200_s31b.sh
# 1. bench/conv_v8_probe.py on v9 (V9_S seconds, default 150) -> $OUT/v9.tgz;
# 2. conv_relu_maxpool's whole ladder (v0-v9, both dtypes) through the engine with the profile step on (ncu
#    budget PROFILE_S, default 80), in the time left.
V9_S=${V9_S:-150} END_S=${END_S:-585} CONV_PINS= CONV_S=100000 FLIP=0 CONV_PROFILE_S=${PROFILE_S:-80} \
  exec bash bench/h200_s32.sh
