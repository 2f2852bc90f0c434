# torch_tiers_devices.sh's checks, with the cuda:1 parameters made first (tiers_blocks.py
# devices_late): PyTorch's first CUDA call (its lazy init and cuda:1's first block, one C call)
# runs before the bridge's install, so cuda:1 already holds memory when the bridge begins
# recording, on a device that is not the current one. The bridge's start sample must cover it
# (it samples every device with reserved memory, as its periodic samples do); without that,
# cuda:1's first batch has no base and is not replayed. A race made the same state in
# torch_tiers_devices now and then (CI, ASan); here it is made every run.
TIERS_DEVICES_CASE=devices_late
. "$SRC/tests/cases/torch_tiers_devices.sh"
