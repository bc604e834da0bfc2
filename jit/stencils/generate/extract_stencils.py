#!/usr/bin/env python3
"""Build-time extractor of the copy-and-patch tier: reads the stencil objects clang-19 compiled from
stencils.c and host_stencils.c (ELF64, little-endian, x86-64 or AArch64, all of one machine) and
writes a C++ header with each stencil's bytes and holes (offset, relocation kind, hole, addend). Run by CMake; its output is never checked
in. Fails loudly on anything the tier could not patch (a data section, an unknown relocation or
symbol), so a compiler change cannot produce a silently wrong stencil."""
import re
import struct
import sys

# Relocation types the tier patches, per machine: ELF type -> the tier's Reloc name.
RELOCS = {
    62: {  # EM_X86_64
        2: "kPcRel32",  # R_X86_64_PC32
        4: "kPcRel32",  # R_X86_64_PLT32
        10: "kAbs32",  # R_X86_64_32
        11: "kAbs32S",  # R_X86_64_32S
    },
    183: {  # EM_AARCH64
        263: "kMovwG0",  # R_AARCH64_MOVW_UABS_G0
        264: "kMovwG0",  # R_AARCH64_MOVW_UABS_G0_NC
        265: "kMovwG1",  # R_AARCH64_MOVW_UABS_G1
        266: "kMovwG1",  # R_AARCH64_MOVW_UABS_G1_NC
        267: "kMovwG2",  # R_AARCH64_MOVW_UABS_G2
        268: "kMovwG2",  # R_AARCH64_MOVW_UABS_G2_NC
        269: "kMovwG3",  # R_AARCH64_MOVW_UABS_G3
        282: "kBranch26",  # R_AARCH64_JUMP26
        283: "kBranch26",  # R_AARCH64_CALL26
    },
}
# Undefined symbols -> the tier's Hole name.
HOLES = {
    "HOLE_arity": "kArity",
    "HOLE_offset": "kOffset",
    "HOLE_type_index": "kTypeIndex",
    "HOLE_slot": "kSlot",
    "HOLE_index": "kIndex",
    "HOLE_header_type": "kHeaderTypeOffset",
    "HOLE_rank_plus_one": "kRankPlusOne",
    "HOLE_check_dtype": "kCheckDtype",
    "HOLE_dtype": "kDtype",
    "HOLE_header_size": "kHeaderSize",
    "HOLE_object": "kObjectOffset",
    "HOLE_count_offset": "kSelfCountOffset",
    "HOLE_name_offset": "kSelfNameOffset",
    "HOLE_type_offset": "kHostTypeOffset",
    "HOLE_int_size_offset": "kHostIntSizeOffset",
    "HOLE_int_digits_offset": "kHostIntDigitsOffset",
    "HOLE_float_value_offset": "kHostFloatValueOffset",
    "HOLE_device_value_offset": "kHostDeviceValueOffset",
    "HOLE_dtype_value_offset": "kHostDtypeValueOffset",
    "DATA_host": "kHostData",
    "CONT_next": "kNext",
    "CONT_chain": "kNext",  # a host entry's switch into the thunk chain (other parameters)
    "CONT_fail": "kFail",
    "CONT_slow": "kSlow",
    "CONT_generic": "kGeneric",
    "CONT_exit": "kExit",
    "CONT_exit_call": "kExit",  # the same from a stencil with the thunks' parameters
    "FN_fallback": "kFallback",
    "FN_box_result": "kBoxResult",
    "FN_box_results": "kBoxResults",
    "FN_propagate_status": "kPropagateStatus",
    "FN_memchr": "kMemchr",
    "FN_resolve_path": "kResolvePath",
    "FN_any_defect": "kAnyDefect",
    "FN_f16_from_double": "kF16FromDouble",
    "FN_f16_from_int": "kF16FromInt",
    "FN_bf16_from_double": "kBF16FromDouble",
    "FN_bf16_from_int": "kBF16FromInt",
    "FN_host_fallback": "kHostFallback",
    "FN_count_reached": "kCountReached",
}


def fail(message):
    sys.exit("extract_stencils.py: " + message)


def read_object(path):
    """The object's machine and its stencils by section index: name, code, patches."""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        fail("%s: not a little-endian ELF64 object" % path)
    machine = struct.unpack_from("<H", data, 18)[0]
    if machine not in RELOCS:
        fail("%s: unsupported machine %d" % (path, machine))
    shoff = struct.unpack_from("<Q", data, 40)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
    sections = []
    for i in range(shnum):
        (name, typ, flags, addr, off, size, link, info, align,
         entsize) = struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
        sections.append(dict(name=name, type=typ, flags=flags, off=off, size=size, link=link,
                             info=info, align=align))
    shstr = sections[shstrndx]

    def cstr(table, offset):
        start = table["off"] + offset
        return data[start:data.index(b"\0", start)].decode()

    for s in sections:
        s["name"] = cstr(shstr, s["name"])
    symtab = next(s for s in sections if s["type"] == 2)
    strtab = sections[symtab["link"]]
    symbols = []
    for i in range(symtab["size"] // 24):
        name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", data,
                                                                   symtab["off"] + i * 24)
        symbols.append(dict(name=cstr(strtab, name), type=info & 15, shndx=shndx, value=value))

    stencils = {}
    for index, s in enumerate(sections):
        is_alloc = s["flags"] & 2
        if not is_alloc or s["size"] == 0:
            continue
        if not s["name"].startswith(".text.stencil_"):
            fail("%s: unexpected section %s: stencils must hold code only" % (path, s["name"]))
        stencils[index] = dict(name=s["name"][len(".text."):],
                               code=data[s["off"]:s["off"] + s["size"]], patches=[])
    for s in sections:
        if s["type"] != 4:  # SHT_RELA
            continue
        if s["info"] not in stencils:
            continue
        stencil = stencils[s["info"]]
        for i in range(s["size"] // 24):
            offset, info, addend = struct.unpack_from("<QQq", data, s["off"] + i * 24)
            rtype, sym = info & 0xffffffff, info >> 32
            kind = RELOCS[machine].get(rtype)
            if kind is None:
                fail("%s: relocation type %d at %#x" % (stencil["name"], rtype, offset))
            symbol = symbols[sym]
            hole = HOLES.get(symbol["name"])
            if hole is None or symbol["shndx"] != 0:
                fail("%s: relocation against %r at %#x" % (stencil["name"], symbol["name"],
                                                           offset))
            stencil["patches"].append((offset, kind, hole, addend))
    return machine, stencils


def main():
    if len(sys.argv) < 3:
        fail("usage: extract_stencils.py STENCILS.o [MORE.o ...] OUT.h")
    machine = None
    stencils = {}
    for path in sys.argv[1:-1]:
        object_machine, object_stencils = read_object(path)
        if machine is not None and object_machine != machine:
            fail("%s: machine %d, the others' %d" % (path, object_machine, machine))
        machine = object_machine
        for stencil in object_stencils.values():
            if stencil["name"] in stencils:
                fail("%s: a second %s" % (path, stencil["name"]))
            stencils[stencil["name"]] = stencil
    # The trailing jump to the next stencil, which the tier drops when that stencil follows.
    for stencil in stencils.values():
        code, patches = stencil["code"], stencil["patches"]
        tail = 0
        last = [p for p in patches if p[2] == "kNext" and p[0] == len(code) - 4]
        if last:
            if machine == 62 and code[-5] == 0xE9 and last[0][3] == -4:
                tail = 5
            elif machine == 183 and (code[-1] & 0xFC) == 0x14 and last[0][3] == 0:
                tail = 4
        stencil["tail"] = tail

    out = []
    out.append("// Generated by jit/stencils/generate/extract_stencils.py from the stencil objects; do not edit.")
    out.append("#pragma once")
    out.append('#include "stencils/link/stencil_types.h"')
    out.append("namespace ffijit::stencils::generated {")
    out.append("inline constexpr Machine kMachine = Machine::%s;" %
               ("kX86_64" if machine == 62 else "kAArch64"))
    names = sorted(s["name"] for s in stencils.values())
    by_name = {s["name"]: s for s in stencils.values()}
    for name in names:
        s = by_name[name]
        code = ", ".join("0x%02x" % b for b in s["code"])
        out.append("inline constexpr uint8_t k_%s_code[] = {%s};" % (name, code))
        if s["patches"]:
            patches = ", ".join("{%d, Reloc::%s, Hole::%s, %d}" % p for p in s["patches"])
            out.append("inline constexpr Patch k_%s_patches[] = {%s};" % (name, patches))
        out.append("inline constexpr Stencil k_%s = {k_%s_code, %d, %s, %d, %d};" %
                   (name, name, len(s["code"]),
                    "k_%s_patches" % name if s["patches"] else "nullptr", len(s["patches"]),
                    s["tail"]))
    # Families: the argument stencils of one conversion by register (k_arg_<conv>_g / _f, _p for a
    # register pair by its first register), the
    # call stencils of one result kind by number of stack slots (k_call_<kind>_s).
    families = {}
    for name in names:
        match = re.match(r"^stencil_(arg|call|hcall)_(\w+)_([gfsp])(\d+)$", name)
        if match:
            role, conv, cls, index = match.groups()
            families.setdefault("k_%s_%s_%s" % (role, conv, cls), []).append((int(index), name))
    for family, members in sorted(families.items()):
        members.sort()
        if [i for i, _ in members] != list(range(len(members))):
            fail("%s: indices not 0..n" % family)
        out.append("inline constexpr const Stencil* %s[] = {%s};" %
                   (family, ", ".join("&k_%s" % n for _, n in members)))
    out.append("}  // namespace ffijit::stencils::generated")
    with open(sys.argv[-1], "w") as f:
        f.write("\n".join(out) + "\n")


main()
