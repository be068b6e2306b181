#!/usr/bin/env python3
"""Copies a tree of files over NFS with libnfs (Debian libnfs13, the library
behind nfs-cp) through one mount, as a mounted client would, instead of one
process and one mount per file.

    libnfs-tree.py put|get NFS_URL LOCAL_DIR < relative paths, one per line

put creates the folders, then writes each file (CREATE, WRITE, COMMIT at
close); get reads each back into LOCAL_DIR. Prints {"files", "bytes", "ms"}.
"""
import ctypes
import json
import os
import sys
import time

lib = ctypes.CDLL("libnfs.so.13")
lib.nfs_init_context.restype = ctypes.c_void_p
lib.nfs_get_error.restype = ctypes.c_char_p
lib.nfs_get_error.argtypes = [ctypes.c_void_p]
lib.nfs_parse_url_dir.restype = ctypes.POINTER(ctypes.c_char_p * 3)
lib.nfs_parse_url_dir.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.nfs_mount.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
lib.nfs_mkdir.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.nfs_creat.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]
lib.nfs_open.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]
lib.nfs_write.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_char_p]
lib.nfs_read.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p]
lib.nfs_close.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
lib.nfs_umount.argtypes = [ctypes.c_void_p]
lib.nfs_destroy_context.argtypes = [ctypes.c_void_p]
lib.nfs_destroy_url.argtypes = [ctypes.c_void_p]

CHUNK = 1 << 20


def main() -> None:
    mode, url, local = sys.argv[1], sys.argv[2], sys.argv[3]
    paths = [p for p in sys.stdin.read().split("\n") if p]
    nfs = lib.nfs_init_context()

    def check(rc: int, what: str) -> None:
        if rc < 0:
            raise SystemExit(f"{what}: {lib.nfs_get_error(nfs).decode()}")

    parsed = lib.nfs_parse_url_dir(nfs, url.encode())
    if not parsed:
        raise SystemExit(f"url: {lib.nfs_get_error(nfs).decode()}")
    server, export = parsed.contents[0], parsed.contents[1]
    check(lib.nfs_mount(nfs, server, export), "mount")
    lib.nfs_destroy_url(parsed)
    start = time.monotonic()
    total = 0
    if mode == "put":
        for d in sorted({os.path.dirname(p) for p in paths if os.path.dirname(p)}):
            check(lib.nfs_mkdir(nfs, f"/{d}".encode()), f"mkdir {d}")
    for p in paths:
        fh = ctypes.c_void_p()
        target = f"/{p}".encode()
        if mode == "put":
            check(lib.nfs_creat(nfs, target, 0o644, ctypes.byref(fh)), f"create {p}")
            with open(os.path.join(local, p), "rb") as f:
                while chunk := f.read(CHUNK):
                    written = lib.nfs_write(nfs, fh, len(chunk), chunk)
                    check(written, f"write {p}")
                    if written != len(chunk):
                        raise SystemExit(f"write {p}: {written} of {len(chunk)} bytes")
                    total += len(chunk)
        else:
            check(lib.nfs_open(nfs, target, os.O_RDONLY, ctypes.byref(fh)), f"open {p}")
            os.makedirs(os.path.dirname(os.path.join(local, p)), exist_ok=True)
            buf = ctypes.create_string_buffer(CHUNK)
            with open(os.path.join(local, p), "wb") as f:
                while (n := lib.nfs_read(nfs, fh, CHUNK, buf)) != 0:
                    check(n, f"read {p}")
                    f.write(buf.raw[:n])
                    total += n
        check(lib.nfs_close(nfs, fh), f"close {p}")
    ms = round((time.monotonic() - start) * 1000)
    lib.nfs_umount(nfs)
    lib.nfs_destroy_context(nfs)
    print(json.dumps({"files": len(paths), "bytes": total, "ms": ms}))


main()
