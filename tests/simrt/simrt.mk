# ---- the simulated CUDA runtime and NVML (tests/simrt, tests/simnvml; fixtures only) ------------
# Included from mk/tests.mk. libcudart.so.13 carries the real PyTorch wheel on the simulated driver;
# libnvidia-ml.so.1 answers what PyTorch and the idle-cause analysis ask NVML. See tests/simrt/README.md.
#   make torch-env [VENV=.venv]   the virtualenv with torch (CUDA 13 build) + holistictraceanalysis
SIMRT_SRC  := $(wildcard tests/simrt/*.c)
SIMRT      := $(O)/simrt/libcudart.so.13
SIMNVML_SRC := $(wildcard tests/simnvml/*.c)
SIMNVML    := $(O)/simnvml/libnvidia-ml.so.1
VENV       ?= .venv
VENV_PY    := $(VENV)/bin/python
# nvml.h: the toolkit's where it ships one, else the nvidia-nvml-dev wheel that torch-env installs.
NVML_INC   ?= $(firstword $(patsubst %/nvml.h,%,$(wildcard $(CUDA_HOME)/include/nvml.h $(VENV)/lib/python3*/site-packages/nvidia/cu13/include/nvml.h)))
SIMNVML_BUILD := $(if $(NVML_INC),$(SIMNVML))

$(SIMRT): $(call obj,$(SIMRT_SRC))
	@mkdir -p $(dir $@)
	@echo "  LD      $@ (simulated CUDA runtime)"
	$(Q)$(CC) -shared -o $@ $^ $(LDFLAGS) -Wl,-soname,libcudart.so.13 -Wl,--version-script=tests/simrt/libcudart.map \
	  -Wl,-Bsymbolic-functions -Wl,--no-undefined -lpthread -ldl
	$(Q)ln -sf libcudart.so.13 $(O)/simrt/libcudart.so

$(O)/obj/tests/simnvml/%.c.o: CPPFLAGS += -I$(NVML_INC)
$(SIMNVML): $(call obj,$(SIMNVML_SRC))
	@mkdir -p $(dir $@)
	@echo "  LD      $@ (simulated NVML)"
	$(Q)$(CC) -shared -o $@ $^ $(LDFLAGS) -Wl,-soname,libnvidia-ml.so.1 -Wl,--version-script=tests/simnvml/libnvidia-ml.map -Wl,--no-undefined -lpthread -ldl
	$(Q)ln -sf libnvidia-ml.so.1 $(O)/simnvml/libnvidia-ml.so

fixtures: $(SIMRT) $(SIMNVML_BUILD)

# torch (>= 2.9, the CUDA 13 build PyPI serves by default) and holistictraceanalysis; nvidia-nvml-dev
# brings nvml.h for the simulated NVML. Idempotent: an existing environment is only completed.
torch-env:
	$(Q)[ -x $(VENV_PY) ] || $(PYTHON) -m venv $(VENV)
	$(Q)$(VENV_PY) -m pip install -q 'torch>=2.9' holistictraceanalysis nvidia-nvml-dev
	$(Q)$(VENV_PY) -c "import torch; v = torch.version.cuda or ''; assert v.startswith('13'), 'torch built for CUDA ' + v; print('torch-env: torch', torch.__version__, 'CUDA', v, 'in $(VENV)')"

.PHONY: torch-env

# python3 -m venv needs Debian's python3-venv (in the Makefile's DEB_PKGS); the torch tests find
# the environment through GT_VENV.
export GT_VENV ?= $(abspath $(VENV))
