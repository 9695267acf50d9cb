"""Facts about the committed sample binaries, shared by several test modules."""

#: The nine nvrtc functions of the seed bug (sample_bins/broken and fixed/libtorch_cuda.so).
NVRTC9 = frozenset(
    {
        "nvrtcCreateProgram", "nvrtcDestroyProgram", "nvrtcCompileProgram", "nvrtcGetPTXSize", "nvrtcGetPTX",
        "nvrtcGetCUBINSize", "nvrtcGetCUBIN", "nvrtcGetProgramLogSize", "nvrtcGetProgramLog",
    }
)  # fmt: skip

#: Weak undefined references every GCC-built shared object carries (crtstuff.c).
START_FILES = frozenset(
    {"_ITM_deregisterTMCloneTable", "_ITM_registerTMCloneTable", "__gmon_start__", "__cxa_finalize"}
)
