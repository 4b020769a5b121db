"""The C++ dump program for the cross-language test, written from kafkacodec's schema IR:
C++ has no reflection, so for each class the official compiler writes (cpp_stl target),
a function prints its stored fields through their accessors as JSON, in the shape the
other dumps print (bytes as {"hex": ...}, varints as their value, absent fields left out).
The program reads the same jobs file as the Java and JavaScript dumps and checks each
entry's CRC of a log with its own CRC-32C and CRC-32 over the schema's crc_from/crc_to."""

from __future__ import annotations

from crosslang import MODULES

UNSIGNED = {"B", "H", "I"}
WIDTH_TYPES = {"b": "int8_t", "h": "int16_t", "i": "int32_t", "q": "int64_t",
               "B": "uint8_t", "H": "uint16_t", "I": "uint32_t", "Q": "uint64_t"}  # fmt: skip


def _cpp_name(module_id: str, path: str) -> str:
    parts = [p for p in path.split("/") if p and p != "types"]
    return "::".join([f"{module_id}_t", *(f"{p}_t" for p in parts)])


def _func(module_id: str, path: str) -> str:
    return "dump_" + _cpp_name(module_id, path).replace("::", "__")


def classes() -> dict[tuple[str, str], tuple[str, str]]:
    """(module id, Python class name) -> (C++ class, dump function)."""
    return {(m.id, t.class_name): (_cpp_name(m.id, t.path), _func(m.id, t.path))
            for m in MODULES for t in m.types}  # fmt: skip


def _resolve(table, module_id: str, class_name: str):
    if (module_id, class_name) in table:
        return table[(module_id, class_name)]
    found = [v for (mod, cls), v in table.items() if cls == class_name]
    assert len(found) == 1, (module_id, class_name, found)
    return found[0]


def _value(f, expr: str, module_id: str, table) -> list[str]:
    """Statements that append the JSON of one value (not a list) of field f to `o`."""
    if f.kind == "int":
        cast = "unsigned long long" if f.fmt in UNSIGNED else "long long"
        # an enum field through its declared width first: the compiler's C++ enums have no
        # fixed underlying type, and one whose members are all >= 0 holds a negative int16
        # (a control record's type) as a large unsigned number
        width = WIDTH_TYPES.get(f.fmt)
        if width is not None and f.enum_class:
            return [f"o += std::to_string(({cast}) ({width}) ({expr}));"]
        return [f"o += std::to_string(({cast}) ({expr}));"]
    if f.kind == "float":
        return [f"put_double(o, {expr});"]
    if f.kind == "varint":
        cast = "long long" if f.varint_signed else "unsigned long long"
        return [f"o += std::to_string(({cast}) ({expr})->value());"]
    if f.kind == "bytes":
        return [f"put_hex(o, {expr});"]
    if f.kind == "str":
        return [f"put_str(o, {expr});"]
    if f.kind == "user":
        _, fn = _resolve(table, module_id, f.user_class)
        return [f"{fn}({expr}, o);"]
    if f.kind == "switch":
        out = ["{", f"kaitai::kstruct* s = {expr};", "if (false) {}"]
        for cls in dict.fromkeys(c for _, c in f.switch_cases):
            cpp, fn = _resolve(table, module_id, cls)
            out.append(f"else if ({cpp}* c = dynamic_cast<{cpp}*>(s)) {fn}(c, o);")
        out += ['else throw std::runtime_error("a switch case of no known class");', "}"]
        return out
    raise AssertionError(f"no dump for a {f.kind} field")


def _fields(fields, m, table) -> list[str]:
    """Statements that append each field of `x` (a pointer to its class) to `o`."""
    body = []
    for f in fields:
        nullable = bool(f.cond) or (f.kind == "switch" and f.switch_default is None)
        inner = [f'key(o, first, "{f.name}");']
        if f.is_list:
            item = f"(*x->{f.name}())[i]"
            inner += ['o += "[";', f"for (size_t i = 0; i < x->{f.name}()->size(); i++) {{",
                      'if (i) o += ",";', *_value(f, item, m.id, table), "}", 'o += "]";']  # fmt: skip
        else:
            inner += _value(f, f"x->{f.name}()", m.id, table)
        if f.kind == "switch" and f.switch_raw_default:
            raw = [f'key(o, first, "{f.name}");', f"put_hex(o, x->_raw_{f.name}());"]
            body += [f"if (!x->_is_null_{f.name}()) {{", *inner, "} else {", *raw, "}"]
        elif nullable:
            body += [f"if (!x->_is_null_{f.name}()) {{", *inner, "}"]
        else:
            body += inner
    return body


def source() -> str:
    table = classes()
    decls, bodies = [], []
    for m in MODULES:
        for t in m.types:
            cpp, fn = table[(m.id, t.class_name)]
            # an inlined body (-kafkacodec-inline) is a class of its own in the compiler's output
            inlined = [(b, _cpp_name(m.id, b.path), _func(m.id, b.path)) for b in t.inlined]
            for b, bcpp, bfn in inlined:
                decls.append(f"static void {bfn}({bcpp}* x, std::string& o);")
                bodies.append("\n".join([f"static void {bfn}({bcpp}* x, std::string& o) {{", 'o += "{";',
                                          "bool first = true;",
                                          *_fields([f for f in t.fields if f.via == b.name], m, table),
                                          'o += "}";', "}"]))  # fmt: skip
            decls.append(f"static void {fn}({cpp}* x, std::string& o);")
            body = [
                f"static void {fn}({cpp}* x, std::string& o) {{",
                'o += "{";',
                "bool first = true;",
            ]
            for p in t.params:
                body += [
                    f'key(o, first, "{p.name}");',
                    f"o += std::to_string((long long) x->{p.name}());",
                ]
            body += _fields([f for f in t.fields if f.via is None], m, table)
            for b, _bcpp, bfn in inlined:
                body += [f'key(o, first, "{b.name}");', f"{bfn}(x->{b.name}(), o);"]
            body += ['o += "}";', "}"]
            bodies.append("\n".join(body))
    includes = "".join(f'#include "{m.id}.h"\n' for m in MODULES)
    roots = "\n".join(
        _root(m, t, table) for m in MODULES for t in m.types if t.path == "/" and len(t.params) <= 1
    )
    return PRELUDE.replace("@INCLUDES@", includes) + "\n".join(decls) + "\n\n" + "\n\n".join(bodies) + \
        "\n\nstatic bool parse_and_dump(const std::string& cls, const std::string& param, kaitai::kstream* io, std::string& o, std::string& data) {\n" + \
        roots + "\n    return false;\n}\n" + MAIN  # fmt: skip


def _root(m, t, table) -> str:
    cpp, fn = table[(m.id, t.class_name)]
    args = "io" if not t.params else "(int16_t) std::stoll(param), io"
    log = "check_log(obj, data, o);" if m.id == "kafka_log" else ""
    return (f'    if (cls == "{t.class_name}") {{ {cpp}* obj = new {cpp}({args}); o += "{{\\"ok\\":"; '
            f'{fn}(obj, o); {log} o += "}}"; delete obj; return true; }}')  # fmt: skip


PRELUDE = r"""// Generated by tests/crosslang/cpp_dump.py from kafkacodec's schemas: do not edit.
#include <stdint.h>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>
#include "kaitai/kaitaistream.h"
@INCLUDES@
static void key(std::string& o, bool& first, const char* name) {
    if (!first) o += ",";
    first = false;
    o += "\"";
    o += name;
    o += "\":";
}

static void put_hex(std::string& o, const std::string& b) {
    static const char* digits = "0123456789abcdef";
    o += "{\"hex\":\"";
    for (size_t i = 0; i < b.size(); i++) {
        unsigned char c = (unsigned char) b[i];
        o += digits[c >> 4];
        o += digits[c & 15];
    }
    o += "\"}";
}

static void put_str(std::string& o, const std::string& s) {
    o += "\"";
    for (size_t i = 0; i < s.size(); i++) {
        unsigned char c = (unsigned char) s[i];
        if (c == '"') o += "\\\"";
        else if (c == '\\') o += "\\\\";
        else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            o += buf;
        } else o += (char) c;
    }
    o += "\"";
}

static void put_double(std::string& o, double d) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", d);
    o += buf;
}

static uint32_t crc(const std::string& data, size_t from, size_t to, uint32_t poly) {
    uint32_t c = 0xffffffffu;
    for (size_t i = from; i < to; i++) {
        c ^= (unsigned char) data[i];
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ poly : c >> 1;
    }
    return c ^ 0xffffffffu;
}

// Each whole entry's stored CRC and the one computed over [crc_from, crc_to) of it:
// CRC-32C for a v2 batch, CRC-32 for a legacy message.
static void check_log(kafka_log_t* log, const std::string& data, std::string& o) {
    o += ",\"crc\":[";
    size_t pos = 0;
    for (size_t i = 0; i < log->entries()->size(); i++) {
        kafka_log_t::entry_t* e = (*log->entries())[i];
        if (e->_is_null_body()) break;  // a partial entry ends the log
        uint32_t stored, computed;
        if (kafka_record_batch_t* b = dynamic_cast<kafka_record_batch_t*>(e->body())) {
            stored = b->crc();
            computed = crc(data, pos + b->crc_from(), pos + b->crc_to(), 0x82f63b78u);
        } else {
            kafka_legacy_message_t* m = dynamic_cast<kafka_legacy_message_t*>(e->body());
            stored = m->crc();
            computed = crc(data, pos + m->crc_from(), pos + m->crc_to(), 0xedb88320u);
        }
        if (i) o += ",";
        o += "{\"position\":" + std::to_string((unsigned long long) pos) + ",\"stored\":" +
             std::to_string((unsigned long long) stored) + ",\"computed\":" +
             std::to_string((unsigned long long) computed) + ",\"ok\":" + (stored == computed ? "true" : "false") + "}";
        pos += 12 + (size_t) e->length();
    }
    o += "]";
}

"""

MAIN = r"""
int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: kafkacodec-dump JOBS" << std::endl;
        return 2;
    }
    std::ifstream jobs(argv[1]);
    std::string line;
    while (std::getline(jobs, line)) {
        if (line.empty()) continue;
        std::vector<std::string> part;
        std::stringstream ss(line);
        std::string item;
        while (part.size() < 3 && std::getline(ss, item, '\t')) part.push_back(item);
        std::getline(ss, item);
        part.push_back(item);
        std::ifstream in(part[3].c_str(), std::ios::binary);
        std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::string data = all.substr((size_t) std::stoll(part[2]));
        std::string o;
        try {
            kaitai::kstream io(data);
            if (!parse_and_dump(part[0], part[1], &io, o, data)) throw std::runtime_error("unknown class " + part[0]);
        } catch (const std::exception& e) {
            o = "{\"error\":\"exception\",\"message\":";
            put_str(o, e.what());
            o += "}";
        }
        std::cout << o << "\n";
    }
    return 0;
}
"""
