# An object without a .note.GNU-stack section: the linker then gives the whole
# shared object an executable stack (PT_GNU_STACK RWE), which glibc 2.41 and
# later refuse to dlopen.  Deliberately no ".section .note.GNU-stack".
	.text
	.globl	stack_user
	.type	stack_user, @function
stack_user:
	xorl	%eax, %eax
	ret
	.size	stack_user, .-stack_user
