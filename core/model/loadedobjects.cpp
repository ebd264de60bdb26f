// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/loadedobjects.h"

#include <unordered_set>
#include <vector>

#include <torch/script.h>

namespace d2dpo {

namespace {

constexpr size_t kMaxValues = 10'000'000;

class ObjectWalk {
public:
    Status visit(const c10::IValue& root)
    {
        std::vector<std::pair<c10::IValue, c10::TypePtr>> pending{{root, root.type()}};
        while (!pending.empty()) {
            auto [value, declared] = std::move(pending.back());
            pending.pop_back();
            if (++m_count > kMaxValues)
                return makeError("its module holds more than " + std::to_string(kMaxValues) + " values");
            if (!value.type()->isSubtypeOf(*declared))
                return refuse(value.type()->repr_str() + " where " + declared->repr_str() + " is declared");
            if (value.isObject()) {
                const auto& object = value.toObjectRef();
                if (!m_seen.insert(&object).second)
                    continue;
                const auto type = object.type();
                if (object.slots().size() != type->numAttributes())
                    return refuse("an object of " + type->repr_str() + " with " + std::to_string(object.slots().size()) +
                                  " slots for its " + std::to_string(type->numAttributes()) + " attributes");
                for (size_t i = 0; i < object.slots().size(); ++i)
                    pending.emplace_back(object.slots()[i], type->getAttribute(i));
            } else if (value.isList()) {
                const auto list = value.toList();
                const c10::TypePtr element = list.elementType();
                for (const c10::IValue& item : list.vec())
                    pending.emplace_back(item, element);
            } else if (value.isGenericDict()) {
                const auto dict = value.toGenericDict();
                for (const auto& entry : dict) {
                    pending.emplace_back(entry.key(), dict.keyType());
                    pending.emplace_back(entry.value(), dict.valueType());
                }
            } else if (value.isTuple()) {
                const auto& tuple = value.toTupleRef();
                const auto* declaredTuple = declared->castRaw<c10::TupleType>();
                for (size_t i = 0; i < tuple.elements().size(); ++i)
                    pending.emplace_back(tuple.elements()[i], declaredTuple && i < declaredTuple->elements().size()
                                                                ? declaredTuple->elements()[i]
                                                                : c10::AnyType::get());
            }
        }
        return Ok{};
    }

private:
    static Status refuse(const std::string& what)
    {
        return makeError("its data holds " + what.substr(0, 200) + ": an edited data.pkl, which the interpreter would "
                         "read past; the model is never run");
    }

    std::unordered_set<const c10::ivalue::Object*> m_seen;
    size_t m_count = 0;
};

} // namespace

Status checkLoadedObjects(const torch::jit::Module& module)
{
    return ObjectWalk().visit(module._ivalue());
}

} // namespace d2dpo
