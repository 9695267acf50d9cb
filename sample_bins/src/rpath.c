/* linkaudit fixture: a plain library; build.sh links it with different
 * DT_RPATH / DT_RUNPATH values (misc/libleak.so, misc/libabs.so). */
#include <string.h>

int rpath_demo(const char *s) { return s ? (int)strlen(s) : -1; }
