// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/sql/sqldatabase.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace d2dpo::sql {

Value Value::integer(int64_t v)
{
    Value value;
    value.m_type = Type::Integer;
    value.m_integer = v;
    return value;
}

Value Value::real(double v)
{
    Value value;
    value.m_type = Type::Real;
    value.m_real = v;
    return value;
}

Value Value::text(std::string v)
{
    Value value;
    value.m_type = Type::Text;
    value.m_text = std::move(v);
    return value;
}

int64_t Value::getInt64() const
{
    switch (m_type) {
    case Type::Null:
        return 0;
    case Type::Integer:
        return m_integer;
    case Type::Real:
        return int64_t(m_real);
    case Type::Text:
        break;
    }
    // PostgreSQL hands every value over as text; its booleans read "t" and "f".
    if (m_text == "t")
        return 1;
    if (m_text == "f")
        return 0;
    return std::strtoll(m_text.c_str(), nullptr, 10);
}

double Value::getDouble() const
{
    switch (m_type) {
    case Type::Null:
        return 0;
    case Type::Integer:
        return double(m_integer);
    case Type::Real:
        return m_real;
    case Type::Text:
        break;
    }
    return std::strtod(m_text.c_str(), nullptr);
}

std::string Value::getString() const
{
    switch (m_type) {
    case Type::Null:
        return {};
    case Type::Integer:
        return std::to_string(m_integer);
    case Type::Real: {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.17g", m_real);
        return buffer;
    }
    case Type::Text:
        break;
    }
    return m_text;
}

Statement::Statement(Database& db, const std::string& sql) : m_backend(db.prepare(sql)) {}
Statement::~Statement() = default;

int64_t Statement::exec()
{
    while (m_backend->step()) {
    }
    return m_backend->changes();
}

Value Database::execAndGet(const std::string& sql)
{
    Statement q(*this, sql);
    if (!q.executeStep())
        return {};
    return q.getColumn(0);
}

WriteTransaction::~WriteTransaction()
{
    if (!m_committed)
        try {
            m_db.exec("ROLLBACK");
        } catch (const Error&) { // the first error is the one reported
        }
}

void WriteTransaction::commit()
{
    m_db.exec("COMMIT");
    m_committed = true;
}

} // namespace d2dpo::sql
