// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/picklecheck.h"

#include <array>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "base/untrustedtext.h"

namespace d2dpo {

namespace {

/// What the walker keeps of a value: its kind, and what the checks read (numbers, names, items).
struct Value {
    enum class Kind { Mark, None, Bool, Int, Float, Text, Tuple, List, Dict, Global, Storage, Tensor, Object };
    Kind kind = Kind::None;
    int64_t number = 0;             ///< Int; Storage: its element count
    std::string text;               ///< Text; Global "module name"; Storage: its key
    uint64_t elementBytes = 0;      ///< Storage
    std::shared_ptr<const std::vector<Value>> items; ///< Tuple (shared: a memo read copies no items)
};
using Kind = Value::Kind;

/// The bytes per element of each storage class TorchScript's pickler names.
std::optional<uint64_t> storageElementBytes(std::string_view name)
{
    static const std::array<std::pair<std::string_view, uint64_t>, 12> kSizes = {{
        {"FloatStorage", 4}, {"DoubleStorage", 8}, {"HalfStorage", 2}, {"BFloat16Storage", 2},
        {"LongStorage", 8}, {"IntStorage", 4}, {"ShortStorage", 2}, {"CharStorage", 1},
        {"ByteStorage", 1}, {"BoolStorage", 1}, {"ComplexFloatStorage", 8}, {"ComplexDoubleStorage", 16},
    }};
    for (const auto& [storage, bytes] : kSizes)
        if (name == storage)
            return bytes;
    return std::nullopt;
}

bool isQualifiedName(std::string_view text)
{
    if (text.empty() || text.size() > 1000)
        return false;
    for (char c : text)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'))
            return false;
    return true;
}

/// The globals TorchScript's pickler writes (torch/csrc/jit/serialization/pickler.cpp, 1.13).
bool isAllowedGlobal(const std::string& module, const std::string& name)
{
    if (module == "__torch__" || module.rfind("__torch__.", 0) == 0)
        return isQualifiedName(module) && isQualifiedName(name); // the archive's own classes
    if (module == "torch")
        return name == "device" || storageElementBytes(name).has_value();
    if (module == "torch._utils")
        return name == "_rebuild_tensor_v2";
    if (module == "collections")
        return name == "OrderedDict";
    if (module == "torch.jit._pickle")
        return name == "build_intlist" || name == "build_doublelist" || name == "build_boollist" ||
               name == "build_tensorlist" || name == "build_genericlist" || name == "restore_type_tag";
    return module == "builtins" && name == "complex";
}

class Walker {
public:
    Walker(std::string_view bytes, const std::string& name, const StorageRecordSize& storageSize)
        : m_bytes(bytes)
        , m_name(name)
        , m_storageSize(storageSize)
    {
    }

    Status walk()
    {
        while (m_at < m_bytes.size()) {
            m_opcodeAt = m_at;
            const auto op = static_cast<unsigned char>(m_bytes[m_at++]);
            if (op == '.') { // STOP
                if (m_at != m_bytes.size())
                    return refuse("STOP before the end of the pickle");
                if (m_stack.size() != 1 || m_stack.front().kind == Kind::Mark)
                    return refuse("STOP with " + std::to_string(m_stack.size()) + " values on the stack, not one");
                return Ok{};
            }
            if (Status s = step(op); !s)
                return s;
            if (m_stack.size() > kMaxStack)
                return refuse("a stack deeper than " + std::to_string(kMaxStack));
        }
        return refuse("no STOP at the end");
    }

private:
    static constexpr size_t kMaxStack = 1'000'000;
    static constexpr size_t kKeptText = 256;

    Status refuse(const std::string& why) const
    {
        return makeError("its pickle " + excerpt(m_name, 120) + " is not one TorchScript writes (byte " +
                         std::to_string(m_opcodeAt) + ": " + why + "); LibTorch's unpickler would trust it, so the "
                         "archive is not loaded");
    }

    bool take(size_t count, std::string_view& out)
    {
        if (m_bytes.size() - m_at < count)
            return false;
        out = m_bytes.substr(m_at, count);
        m_at += count;
        return true;
    }
    bool littleEndian(size_t count, uint64_t& out)
    {
        std::string_view raw;
        if (!take(count, raw))
            return false;
        out = 0;
        for (size_t i = 0; i < count; ++i)
            out |= uint64_t(static_cast<unsigned char>(raw[i])) << (8 * i);
        return true;
    }

    /// The top value, popped; none on an empty stack or at a MARK.
    std::optional<Value> pop()
    {
        if (m_stack.empty() || m_stack.back().kind == Kind::Mark)
            return std::nullopt;
        Value v = std::move(m_stack.back());
        m_stack.pop_back();
        return v;
    }
    /// The values above the last MARK, the MARK taken away; none without a MARK.
    std::optional<std::vector<Value>> popToMark()
    {
        for (size_t i = m_stack.size(); i-- > 0;)
            if (m_stack[i].kind == Kind::Mark) {
                std::vector<Value> out(std::make_move_iterator(m_stack.begin() + std::ptrdiff_t(i) + 1),
                                       std::make_move_iterator(m_stack.end()));
                m_stack.resize(i);
                return out;
            }
        return std::nullopt;
    }
    void push(Kind kind) { m_stack.push_back(Value{kind, 0, {}, 0, {}}); }
    void pushInt(int64_t n) { m_stack.push_back(Value{Kind::Int, n, {}, 0, {}}); }
    void pushTuple(std::vector<Value> items)
    {
        m_stack.push_back(Value{Kind::Tuple, 0, {}, 0, std::make_shared<const std::vector<Value>>(std::move(items))});
    }

    Status step(unsigned char op);
    Status persistentLoad();
    Status reduce();
    Status rebuildTensor(const std::vector<Value>& args);

    std::string_view m_bytes;
    const std::string& m_name;
    const StorageRecordSize& m_storageSize;
    size_t m_at = 0, m_opcodeAt = 0;
    std::vector<Value> m_stack;
    std::unordered_map<uint64_t, Value> m_memo;
};

Status Walker::step(unsigned char op)
{
    uint64_t n = 0;
    std::string_view raw;
    switch (op) {
    case 0x80: // PROTO
        if (!littleEndian(1, n) || n != 2)
            return refuse("protocol " + std::to_string(n) + ", where TorchScript writes 2");
        return Ok{};
    case '(': push(Kind::Mark); return Ok{};
    case 'N': push(Kind::None); return Ok{};
    case 0x88: case 0x89: push(Kind::Bool); m_stack.back().number = op == 0x88; return Ok{};
    case 'K': if (!littleEndian(1, n)) break; pushInt(int64_t(n)); return Ok{};
    case 'M': if (!littleEndian(2, n)) break; pushInt(int64_t(n)); return Ok{};
    case 'J': if (!littleEndian(4, n)) break; pushInt(int64_t(int32_t(uint32_t(n)))); return Ok{};
    case 0x8a: { // LONG1: a signed little-endian integer of n bytes
        uint64_t size = 0;
        if (!littleEndian(1, size) || size > 8 || !littleEndian(size, n))
            return refuse("a LONG1 of more than 8 bytes, or cut short");
        if (size > 0 && size < 8 && (n >> (8 * size - 1)) & 1)
            n |= ~uint64_t(0) << (8 * size); // sign-extend
        pushInt(int64_t(n));
        return Ok{};
    }
    case 'G': if (!take(8, raw)) break; push(Kind::Float); return Ok{};
    case 'X': // BINUNICODE
        if (!littleEndian(4, n) || !take(size_t(n), raw))
            break;
        // Only short texts are read again (storage keys, locations, "storage"): a long one is kept
        // as its length, so that memo reads of a large string copy nothing large.
        m_stack.push_back(Value{Kind::Text, 0, raw.size() <= kKeptText ? std::string(raw) : std::string(), 0, {}});
        return Ok{};
    case ')': pushTuple({}); return Ok{};
    case ']': push(Kind::List); return Ok{};
    case '}': push(Kind::Dict); return Ok{};
    case 't': {
        auto items = popToMark();
        if (!items)
            return refuse("TUPLE without a MARK");
        pushTuple(std::move(*items));
        return Ok{};
    }
    case 0x85: case 0x86: case 0x87: { // TUPLE1..3
        std::vector<Value> items(size_t(op - 0x84));
        for (size_t i = items.size(); i-- > 0;) {
            auto v = pop();
            if (!v)
                return refuse("TUPLE" + std::to_string(items.size()) + " with too few values");
            items[i] = std::move(*v);
        }
        pushTuple(std::move(items));
        return Ok{};
    }
    case 'e': case 'u': { // APPENDS, SETITEMS: onto the list or dict below the MARK
        auto items = popToMark();
        if (!items || m_stack.empty())
            return refuse(op == 'e' ? "APPENDS without a MARK or a list" : "SETITEMS without a MARK or a dict");
        if (m_stack.back().kind != (op == 'e' ? Kind::List : Kind::Dict) || (op == 'u' && items->size() % 2))
            return refuse(op == 'e' ? "APPENDS onto what is not a list" : "SETITEMS onto what is not a dict, or "
                                                                           "an odd count of keys and values");
        return Ok{};
    }
    case 'a': case 's': { // APPEND, SETITEM
        for (int i = op == 'a' ? 1 : 2; i > 0; --i)
            if (!pop())
                return refuse("APPEND or SETITEM with too few values");
        if (m_stack.empty() || m_stack.back().kind != (op == 'a' ? Kind::List : Kind::Dict))
            return refuse("APPEND or SETITEM onto what is not a list or dict");
        return Ok{};
    }
    case 'q': case 'r': // BINPUT, LONG_BINPUT
        if (!littleEndian(op == 'q' ? 1 : 4, n))
            break;
        if (m_stack.empty() || m_stack.back().kind == Kind::Mark)
            return refuse("BINPUT with nothing to keep");
        // TorchScript numbers its memo slots from 0 in order; LibTorch's unpickler grows its memo
        // to any number it is given (LONG_BINPUT 2^32 - 1: 64 GiB).
        if (n > m_memo.size() || m_memo.size() >= kMaxStack)
            return refuse("BINPUT to memo slot " + std::to_string(n) + " after " + std::to_string(m_memo.size()) +
                          " slots, not the next one");
        m_memo[n] = m_stack.back();
        return Ok{};
    case 'h': case 'j': { // BINGET, LONG_BINGET
        if (!littleEndian(op == 'h' ? 1 : 4, n))
            break;
        const auto found = m_memo.find(n);
        if (found == m_memo.end())
            return refuse("BINGET of memo slot " + std::to_string(n) + ", which was never set");
        m_stack.push_back(found->second);
        return Ok{};
    }
    case 'c': { // GLOBAL "module\nname\n"
        const size_t moduleEnd = m_bytes.find('\n', m_at);
        const size_t nameEnd = moduleEnd == std::string_view::npos ? moduleEnd : m_bytes.find('\n', moduleEnd + 1);
        if (nameEnd == std::string_view::npos)
            break;
        const std::string module(m_bytes.substr(m_at, moduleEnd - m_at));
        const std::string name(m_bytes.substr(moduleEnd + 1, nameEnd - moduleEnd - 1));
        m_at = nameEnd + 1;
        if (!isAllowedGlobal(module, name))
            return refuse("the global '" + excerpt(module + "." + name, 120) + "', which TorchScript's pickler never "
                          "names");
        m_stack.push_back(Value{Kind::Global, 0, module + " " + name, 0, {}});
        return Ok{};
    }
    case 'Q': return persistentLoad();
    case 'R': return reduce();
    case 0x81: { // NEWOBJ: an object of the archive's own class
        auto args = pop(), cls = pop();
        if (!args || !cls || args->kind != Kind::Tuple || cls->kind != Kind::Global || cls->text.rfind("__torch__", 0) != 0)
            return refuse("NEWOBJ of what is not one of the archive's classes");
        push(Kind::Object);
        return Ok{};
    }
    case 'b': { // BUILD: the state onto the object below it (an OrderedDict's, in a torch.save file)
        auto state = pop();
        if (!state || m_stack.empty() || (m_stack.back().kind != Kind::Object && m_stack.back().kind != Kind::Dict))
            return refuse("BUILD without an object and its state");
        return Ok{};
    }
    default:
        return refuse("the opcode 0x" + [&] {
            static const char* digits = "0123456789abcdef";
            return std::string{digits[op >> 4], digits[op & 15]};
        }() + ", which TorchScript's pickler never writes");
    }
    return refuse("an argument cut short by the end of the pickle");
}

Status Walker::persistentLoad()
{
    // ("storage", torch.<Type>Storage, key, location, numel): a tensor's bytes in data/<key>.
    auto id = pop();
    const auto* items = id && id->kind == Kind::Tuple ? id->items.get() : nullptr;
    if (!items || items->size() != 5 || (*items)[0].kind != Kind::Text || (*items)[0].text != "storage" ||
        (*items)[1].kind != Kind::Global || (*items)[2].kind != Kind::Text || (*items)[3].kind != Kind::Text ||
        (*items)[4].kind != Kind::Int)
        return refuse("a persistent id that is not a storage as TorchScript writes it");
    const std::string& type = (*items)[1].text;
    const auto bytes = type.rfind("torch ", 0) == 0 ? storageElementBytes(std::string_view(type).substr(6)) : std::nullopt;
    const std::string& key = (*items)[2].text;
    const int64_t numel = (*items)[4].number;
    if (!bytes || numel < 0)
        return refuse("a storage of no known type, or of a negative size");
    const auto recorded = m_storageSize ? m_storageSize(key) : std::nullopt;
    if (!recorded)
        return refuse("a storage in the record '" + excerpt(key, 40) + "', which the archive does not hold");
    uint64_t wanted = 0;
    if (__builtin_mul_overflow(uint64_t(numel), *bytes, &wanted) || wanted > *recorded)
        return refuse("a storage of " + std::to_string(numel) + " elements of " + std::to_string(*bytes) +
                      " bytes in the record '" + excerpt(key, 40) + "' of " + std::to_string(*recorded) + " bytes");
    m_stack.push_back(Value{Kind::Storage, numel, key, *bytes, {}});
    return Ok{};
}

Status Walker::reduce()
{
    auto args = pop(), callable = pop();
    if (!args || !callable || args->kind != Kind::Tuple || callable->kind != Kind::Global)
        return refuse("REDUCE of what is not a global and its arguments");
    const std::string& name = callable->text;
    if (name == "torch._utils _rebuild_tensor_v2")
        return rebuildTensor(*args->items);
    if (name == "collections OrderedDict") {
        push(Kind::Dict);
        return Ok{};
    }
    if (name == "torch.jit._pickle restore_type_tag") {
        if (args->items->empty())
            return refuse("restore_type_tag of nothing");
        m_stack.push_back(args->items->front());
        return Ok{};
    }
    if (name.rfind("torch.jit._pickle build_", 0) == 0 || name == "torch device" || name == "builtins complex") {
        push(name.rfind("torch.jit", 0) == 0 ? Kind::List : Kind::Object);
        return Ok{};
    }
    return refuse("a call of '" + excerpt(name, 120) + "' while unpickling");
}

Status Walker::rebuildTensor(const std::vector<Value>& args)
{
    // (storage, offset, sizes, strides, requires_grad, hooks): the view must lie inside the storage.
    if (args.size() < 4 || args[0].kind != Kind::Storage || args[1].kind != Kind::Int || args[2].kind != Kind::Tuple ||
        args[3].kind != Kind::Tuple || args[2].items->size() != args[3].items->size())
        return refuse("a tensor rebuilt from what is not a storage, an offset, and sizes and strides alike");
    const int64_t offset = args[1].number, storage = args[0].number;
    bool empty = false;
    int64_t last = offset; // the highest element the view reads
    for (size_t i = 0; i < args[2].items->size(); ++i) {
        const Value& size = (*args[2].items)[i];
        const Value& stride = (*args[3].items)[i];
        if (size.kind != Kind::Int || stride.kind != Kind::Int || size.number < 0 || stride.number < 0)
            return refuse("a tensor with a size or stride that is not a count");
        empty = empty || size.number == 0;
        int64_t step = 0;
        if (size.number > 0 && (__builtin_mul_overflow(size.number - 1, stride.number, &step) ||
                                __builtin_add_overflow(last, step, &last)))
            return refuse("a tensor whose extent overflows");
    }
    if (offset < 0 || (empty ? offset > storage : last >= storage))
        return refuse("a tensor that reads element " + std::to_string(last) + " of a storage of " +
                      std::to_string(storage) + " (offset " + std::to_string(offset) + ")");
    push(Kind::Tensor);
    return Ok{};
}

} // namespace

Status checkPickle(std::string_view pickle, const std::string& name, const StorageRecordSize& storageSize)
{
    return Walker(pickle, name, storageSize).walk();
}

} // namespace d2dpo
