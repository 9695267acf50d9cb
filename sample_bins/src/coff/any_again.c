/* A second __declspec(selectany) definition of features.c's shared_constant: COMDAT ANY, one copy kept. */
__declspec(selectany) int shared_constant = 42;
int any_again(void) { return shared_constant; }
