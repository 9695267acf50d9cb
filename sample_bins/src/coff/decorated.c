/* x86 name decoration (built for i686-pc-windows-msvc): cdecl _name, stdcall _name@N,
   fastcall @name@N, vectorcall name@@N. */
int __cdecl c_plain(int a) { return a; }
int __stdcall s_call(int a, int b) { return a + b; }
int __fastcall f_call(int a, int b) { return a - b; }
int __vectorcall v_call(int a, int b) { return a * b; }
int __stdcall imported_std(int a, int b);
int use_imported(void) { return imported_std(1, 2); }
