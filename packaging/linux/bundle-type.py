#!/usr/bin/env python3
"""Sets the bundle-type mark Tauri's bundler writes into the app binary it packs.

    packaging/linux/bundle-type.py BINARY APP|DEB|RPM    # sets it
    packaging/linux/bundle-type.py BINARY                # prints it (UNK: not bundled)

tauri-utils keeps `static __TAURI_BUNDLE_TYPE: &str = "__TAURI_BUNDLE_TYPE_VAR_UNK"` and
`tauri::utils::platform::bundle_type()` reads its last three letters; the bundler
overwrites them (DEB, RPM, APP) in the file. scripts/package makes the AppImage from
the .deb's binary, so it sets APP here the way the bundler does: the symbol's &str slot,
its pointer (an R_X86_64_RELATIVE relocation's addend in a PIE), that address's place
in the file. The same text also sits in tauri-utils' `match` as literals, which a plain
search and replace would change too. Standard library only; 64-bit little-endian ELF.
"""

import struct
import sys

PREFIX = b"__TAURI_BUNDLE_TYPE_VAR_"


def main() -> int:
    if len(sys.argv) not in (2, 3) or sys.argv[2:] not in ([], ["APP"], ["DEB"], ["RPM"]):
        print("usage: bundle-type.py BINARY [APP|DEB|RPM]", file=sys.stderr)
        return 2
    path, kind = sys.argv[1], (sys.argv[2].encode() if len(sys.argv) == 3 else None)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return fail(f"{path} is not a 64-bit little-endian ELF file")
    phoff, shoff = struct.unpack_from("<QQ", data, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, 0x36)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    loads = []
    for i in range(phnum):
        p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 1:
            loads.append((p_vaddr, p_offset, p_filesz))

    def file_offset(vaddr: int) -> int:
        for start, offset, size in loads:
            if start <= vaddr < start + size:
                return offset + vaddr - start
        raise LookupError(f"address {vaddr:#x} is in no loaded segment")

    slot = None
    for _name, sh_type, _fl, _addr, sh_offset, sh_size, sh_link, _info, _align, sh_entsize in sections:
        if sh_type not in (2, 11) or not sh_entsize:  # SHT_SYMTAB, SHT_DYNSYM
            continue
        strtab = sections[sh_link][4]
        for at in range(sh_offset, sh_offset + sh_size, sh_entsize):
            st_name, _info, _other, _shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", data, at)
            end = data.index(b"\0", strtab + st_name)
            if b"__TAURI_BUNDLE_TYPE" in data[strtab + st_name : end] and st_size == 16:
                slot = st_value
                break
        if slot is not None:
            break
    if slot is None:
        return fail(f"{path} has no __TAURI_BUNDLE_TYPE symbol (stripped?)")
    target = None
    for _name, sh_type, _fl, _addr, sh_offset, sh_size, _link, _info, _align, sh_entsize in sections:
        if sh_type != 4 or not sh_entsize:  # SHT_RELA
            continue
        for at in range(sh_offset, sh_offset + sh_size, sh_entsize):
            r_offset, r_info, r_addend = struct.unpack_from("<QQq", data, at)
            if r_offset == slot and r_info & 0xFFFFFFFF == 8:  # R_X86_64_RELATIVE
                target = r_addend
    if target is None:
        target = struct.unpack_from("<Q", data, file_offset(slot))[0]
    at = file_offset(target)
    if data[at : at + len(PREFIX)] != PREFIX:
        return fail(f"the bundle type in {path} is not where its symbol points")
    old = bytes(data[at + len(PREFIX) : at + len(PREFIX) + 3])
    if kind is None:
        print(old.decode())
        return 0
    with open(path, "r+b") as f:
        f.seek(at + len(PREFIX))
        f.write(kind)
    print(f"bundle type {old.decode()} -> {kind.decode()} at offset {at}")
    return 0


def fail(message: str) -> int:
    print(f"bundle-type.py: {message}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
