// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/datafile.h"

namespace d2dpo {

std::string SequenceFileReport::summary() const
{
    return std::to_string(sequences) + " sequences (" + format + "), " + std::to_string(distinct) + " distinct, " +
           std::to_string(duplicates) + " duplicates" + (cropped ? ", " + std::to_string(cropped) + " cropped" : "") +
           ", lengths " + std::to_string(minLength) + ".." + std::to_string(maxLength) + ", " +
           std::to_string(symbols.size()) + " symbols " + symbols;
}

} // namespace d2dpo
