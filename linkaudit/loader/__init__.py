"""Loader emulation: what glibc's ld.so would do with the model, done statically.

* ``ldcache``  — glibc's binary ``/etc/ld.so.cache`` (``ld.so-1.7.0`` and ``glibc-ld.so.cache1.1``).
* ``target``   — the explicit description of the target system (search paths, sysroot, hwcaps,
  driverless flag): the loader never reads ``os.environ`` or the host on its own.
* ``fs``       — a read-only file-system view rooted at ``/`` or at a ``--sysroot``.
* ``ldso``     — the search for one DT_NEEDED, in ``elf/dl-load.c``'s order, with every path tried.
* ``closure``  — load order and lookup scopes per import root.
* ``binding``  — undefined symbol -> defining object, as ``elf/dl-lookup.c`` does it.
"""
