/* linkaudit fixture: calls two NVRTC functions.  build.sh links it against
 * the libnvrtc.so.12 stub and then rewrites DT_NEEDED the way an old
 * `patchelf --replace-needed` did, leaving .gnu.version_r behind. */
#include <stddef.h>

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

extern nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src,
                                      const char *name, int numHeaders,
                                      const char *const *headers,
                                      const char *const *includeNames);
extern nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog);

int mismatch_try_create(const char *src)
{
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, src, "k.cu", 0, NULL, NULL) != 0)
        return -1;
    return nvrtcDestroyProgram(&prog);
}
