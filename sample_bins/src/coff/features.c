/* Symbol-table features of a COFF object: a weak external, COMDAT "any", /DEFAULTLIB,
   /INCLUDE, /EXPORT, /ALTERNATENAME, a common symbol and a plain undefined reference. */
#pragma comment(lib, "nvrtc.lib")
#pragma comment(linker, "/include:forced_symbol")
#pragma comment(linker, "/alternatename:maybe_hook=default_hook")
#pragma comment(linker, "/nodefaultlib:oldnames.lib")

__declspec(selectany) int shared_constant = 42;
__declspec(dllexport) int exported_fn(void) { return shared_constant; }
extern int weak_ref(void) __attribute__((weak));
int default_hook(void) { return 0; }
int maybe_hook(void);
int undefined_fn(void);
int common_counter[4];

int features(void) {
    return (weak_ref ? weak_ref() : 0) + maybe_hook() + undefined_fn() + common_counter[0];
}
