// kafkacodec's test-support subset of the official C++/STL runtime (see kaitaistruct.h):
// the validation errors the generated code throws, with the official names and signatures.
#ifndef KAITAI_EXCEPTIONS_H
#define KAITAI_EXCEPTIONS_H

#include <kaitai/kaitaistream.h>

#include <stdexcept>
#include <string>

namespace kaitai {

class kstruct_error : public std::runtime_error {
public:
    kstruct_error(const std::string what, const std::string src_path)
        : std::runtime_error(src_path + ": " + what), m_src_path(src_path) {}
    virtual ~kstruct_error() throw() {}

protected:
    const std::string m_src_path;
};

class validation_failed_error : public kstruct_error {
public:
    validation_failed_error(const std::string what, kstream* io, const std::string src_path)
        : kstruct_error("at pos " + kstream::to_string((int64_t) io->pos()) + ": validation failed: " + what, src_path),
          m_io(io) {}
    virtual ~validation_failed_error() throw() {}

protected:
    kstream* m_io;
};

template <typename T>
class validation_not_equal_error : public validation_failed_error {
public:
    validation_not_equal_error(const T& expected, const T& actual, kstream* io, const std::string src_path)
        : validation_failed_error("not equal", io, src_path), m_expected(expected), m_actual(actual) {}
    virtual ~validation_not_equal_error() throw() {}
    const T m_expected;
    const T m_actual;
};

template <typename T>
class validation_less_than_error : public validation_failed_error {
public:
    validation_less_than_error(const T& min, const T& actual, kstream* io, const std::string src_path)
        : validation_failed_error("less than", io, src_path), m_min(min), m_actual(actual) {}
    virtual ~validation_less_than_error() throw() {}
    const T m_min;
    const T m_actual;
};

template <typename T>
class validation_greater_than_error : public validation_failed_error {
public:
    validation_greater_than_error(const T& max, const T& actual, kstream* io, const std::string src_path)
        : validation_failed_error("greater than", io, src_path), m_max(max), m_actual(actual) {}
    virtual ~validation_greater_than_error() throw() {}
    const T m_max;
    const T m_actual;
};

template <typename T>
class validation_not_any_of_error : public validation_failed_error {
public:
    validation_not_any_of_error(const T& actual, kstream* io, const std::string src_path)
        : validation_failed_error("not any of", io, src_path), m_actual(actual) {}
    virtual ~validation_not_any_of_error() throw() {}
    const T m_actual;
};

template <typename T>
class validation_expr_error : public validation_failed_error {
public:
    validation_expr_error(const T& actual, kstream* io, const std::string src_path)
        : validation_failed_error("expr", io, src_path), m_actual(actual) {}
    virtual ~validation_expr_error() throw() {}
    const T m_actual;
};

}  // namespace kaitai

#endif
