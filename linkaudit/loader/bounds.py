"""The bound on what the loads of one run may hold, shared by ELF's ``analysis.LoadBudget`` and the
Windows and dyld loads' ``images.ImageBudget`` (a module of its own: a plain ELF run imports no
image loader)."""

#: The loads of one analysis may hold ``LOAD_FLOOR`` loaded objects and resolutions, plus one per
#: ``LOAD_BYTES`` bytes of the inputs' files, each shared part counted once (ELF's
#: ``analysis.LoadBudget``; Windows' and dyld's ``ImageBudget``).  Real inputs stay far below it
#: (``/usr/lib/x86_64-linux-gnu``'s 976 libraries, each loaded alone: about 40,000; torch's wheel
#: and its NVIDIA wheels: about 3,000); N libraries that each need all N, none reached by an import
#: root, hold N^3 (100 of them, 1.6 MB: a million resolutions, 314 MB; 200: 1.95 GB); a ring of
#: N DLLs, each its own root, N^2 (2,000 of them, 2 MB: 8 million, 1.06 GB, 18 s).
LOAD_FLOOR = 250_000
LOAD_BYTES = 4
