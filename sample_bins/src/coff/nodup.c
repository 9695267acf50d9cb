/* Built with -ffunction-sections: each function in its own COMDAT section (selection NODUPLICATES). */
int nodup_one(void) { return 1; }
int nodup_two(void) { return 2; }
