/* linkaudit fixture: an umbrella dylib (libcuda_umbrella.dylib) that re-exports NVRTC with
 * LC_REEXPORT_DYLIB: a client linked against it imports nvrtc* with the umbrella's ordinal, and
 * dyld finds them in the re-exported dylib.  Never run. */
int cuda_umbrella_version(void)
{
    return 12;
}
