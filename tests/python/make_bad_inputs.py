#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes the models and vocabularies `d2dpo import` must refuse (tests/cli/tst_import.cpp), each
made by Python's torch as a user would make it by mistake, and one small valid pair beside them."""
import json
import pickletools
import os
import struct
import sys
import warnings
import zipfile
import zlib
from typing import Tuple

import torch
import torch.nn as nn


class Tiny(nn.Module):
    """A valid denoiser over 3 ids ('0', '1', the mask)."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(3, 8)
        self.head = nn.Linear(8, 3)

    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(tokens) + t[:, None, None])


class OneArgument(Tiny):
    def forward(self, tokens: torch.Tensor) -> torch.Tensor:  # no t
        return self.head(self.embed(tokens))


class WrongShape(Tiny):
    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(tokens)).sum(-1)  # [B, L], not [B, L, V]


class NotFinite(Tiny):
    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(tokens)) + torch.log(t)[:, None, None]  # -inf at t = 0


class NotFiniteInABand(Tiny):
    """NaN only for 0.4 < t < 0.6: finite at the probe's t of 0, 1/4, 3/4 and 1."""

    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        out = self.head(self.embed(tokens) + t[:, None, None])
        band = ((t > 0.4) & (t < 0.6))[:, None, None]
        return torch.where(band, torch.full_like(out, float("nan")), out)


class NotFiniteInANarrowBand(Tiny):
    """NaN only for 0.51 < t < 0.52: between the probe's grid points (multiples of 1/32), met by
    64 Euler steps (t = 33/64)."""

    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        out = self.head(self.embed(tokens) + t[:, None, None])
        band = ((t > 0.51) & (t < 0.52))[:, None, None]
        return torch.where(band, torch.full_like(out, float("nan")), out)


class Throws(Tiny):
    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        if tokens.shape[1] > 0:
            raise RuntimeError("this model only runs on sequences of length 0")
        return self.head(self.embed(tokens))


class WrongShapeAboveFour(Tiny):
    """Passes the probe (4 rows); breaks on a sampling batch."""

    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        out = self.head(self.embed(tokens) + t[:, None, None])
        if tokens.shape[0] > 4:
            return out[:, 1:]
        return out


class Loops(Tiny):
    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        n = 0
        while n >= 0:  # 2^63 turns: never ends
            n = n + 1
        return self.head(self.embed(tokens) + t[:, None, None]) + n


class LoopsOnLargeBatches(Tiny):
    """Passes the probe (4 rows, then 33); never returns on a sampling batch of 50: hangs the measurement."""

    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        n = 0
        while tokens.shape[0] > 33 and n >= 0:
            n = n + 1
        return self.head(self.embed(tokens) + t[:, None, None]) + n


class WarnsLoudly(Tiny):
    """Warns 8 MB on every call (warnings.warn is allowed: a warning is text)."""

    def __init__(self):
        super().__init__()
        self.message = "loud " * 1_600_000

    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        warnings.warn(self.message)
        return self.head(self.embed(tokens) + t[:, None, None])


# Models that act on the user's files: each names the file it touches, set by main() (TorchScript
# keeps a string attribute's value in the archive). The victim must read as before afterwards.
class WritesAFile(Tiny):
    def __init__(self, victim: str):
        super().__init__()
        self.victim = victim

    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        x = torch.from_file(self.victim, shared=True, size=4, dtype=torch.uint8)
        x.copy_(torch.tensor([35, 35, 35, 35], dtype=torch.uint8))  # "####"
        return self.head(self.embed(tokens) + t[:, None, None]) + x.sum() * 0


class SavesAFile(WritesAFile):
    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        torch.save(t, self.victim)
        return self.head(self.embed(tokens) + t[:, None, None])


class WritesWhileLoading(WritesAFile):
    """TorchScript runs __setstate__ while it loads the archive, before any other code."""

    @torch.jit.export
    def __getstate__(self):
        return (self.embed, self.head, self.victim, self.training)

    @torch.jit.export
    def __setstate__(self, state: Tuple[nn.Embedding, nn.Linear, str, bool]):
        x = torch.from_file(state[2], shared=True, size=4, dtype=torch.uint8)
        x.copy_(torch.tensor([36, 36, 36, 36], dtype=torch.uint8))  # "$$$$"
        self.embed = state[0]
        self.head = state[1]
        self.victim = state[2]
        self.training = state[3] or bool(x.sum() < 0)


class SetsByMethod(Tiny):
    """An op off the allowlist called as a method (TorchScript writes it as torch.set_(x))."""

    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        x = t.clone()
        x.set_()
        return self.head(self.embed(tokens) + t[:, None, None]) + x.sum()


class SearchesOutOfBounds(Tiny):
    """torch.searchsorted's sorter is not bounds-checked in LibTorch 1.13: it reads past the tensor."""

    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        boundaries = torch.arange(16, dtype=torch.float32)
        sorter = torch.arange(16) + (1 << 40)
        n = torch.searchsorted(boundaries, t, sorter=sorter).sum() * 0
        return self.head(self.embed(tokens) + t[:, None, None]) + n


class UsesTorchBind(Tiny):
    """A TorchBind class: native code behind an object, outside the op allowlist."""

    def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        profile = torch.classes.profiling._ScriptProfile()
        profile.enable()
        profile.disable()
        return self.head(self.embed(tokens) + t[:, None, None])


def custom_op_model():
    library = torch.library.Library("d2dpo_test_custom", "DEF")
    library.define("touch(Tensor x) -> Tensor")
    library.impl("touch", lambda x: x, "CPU")

    class CustomOp(Tiny):
        def forward(self, tokens: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
            return self.head(self.embed(tokens) + torch.ops.d2dpo_test_custom.touch(t)[:, None, None])

    return torch.jit.script(CustomOp()), library


def rewrite_zip(source, target, inflate):
    """Copies a zip, each record through inflate(name, bytes) -> (bytes, deflate?)."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        for info in zin.infolist():
            data, deflate = inflate(info.filename, zin.read(info.filename))
            zout.writestr(info.filename, data, zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED)


def rename_records(source, target, rename, extra=()):
    """Copies a zip with each record's name through rename(name), then appends (name, bytes) extras."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        for info in zin.infolist():
            zout.writestr(rename(info.filename), zin.read(info.filename))
        for name, data in extra:
            zout.writestr(name, data)


def write_checkpoint(path, payload, version=1):
    """The .d2dpo header (magic, format, size, CRC-32) over `payload`."""
    with open(path, "wb") as f:
        f.write(b"D2DPOCKP" + struct.pack("<IQI", version, len(payload), zlib.crc32(payload)) + payload)


def loader_bypasses(out):
    """The archive that runs code while loading, dressed so that a check reading names as written
    misses it: the loader finds records case-blind, so CODE/ and Code/ are read as code/."""
    hostile = os.path.join(out, "writes-while-loading.pt")

    def in_folder(folder):
        return lambda name: name.replace("/code/", "/" + folder + "/", 1)

    rename_records(hostile, os.path.join(out, "upper-case-code.pt"), in_folder("CODE"))
    rename_records(hostile, os.path.join(out, "mixed-case-code.pt"), in_folder("Code"))
    rename_records(hostile, os.path.join(out, "code-under-data.pt"), in_folder(".data/ts_code/code"))
    with zipfile.ZipFile(hostile) as z:
        code = [n for n in z.namelist() if "/code/" in n and n.endswith(".py")]
        hostile_code = {n: z.read(n) for n in code}
    with zipfile.ZipFile(os.path.join(out, "tiny.pt")) as z:
        tiny_code = [n for n in z.namelist() if "/code/" in n and n.endswith(".py")]
    # tiny.pt with a second record under the name of its code, holding the hostile class.
    rename_records(os.path.join(out, "tiny.pt"), os.path.join(out, "duplicate-name.pt"), lambda n: n,
                   [(tiny_code[0], next(iter(hostile_code.values())))])
    # The same record twice in names that differ only in case.
    rename_records(hostile, os.path.join(out, "case-twins.pt"), lambda n: n,
                   [(n.replace("/code/", "/CODE/", 1), b"") for n in code[:1]])
    rename_records(hostile, os.path.join(out, "extra-record.pt"), lambda n: n, [("writes-while-loading/extra/x", b"")])
    for name in ["upper-case-code", "mixed-case-code", "duplicate-name", "case-twins"]:
        with open(os.path.join(out, name + ".pt"), "rb") as f:
            write_checkpoint(os.path.join(out, name + ".d2dpo"), f.read())


def computed_while_loading(out, victim):
    """tiny.pt with a value LibTorch computes while it compiles the archive, before any check of a
    graph could run: a parameter's default, a class constant, an attribute's annotation. Each
    writes "AAAA" over the victim. TorchScript never writes such code; an editor of the zip does."""
    poke = 'int(torch.from_file("%s", True, 4, dtype=0).fill_(65).sum())' % victim
    tiny = os.path.join(out, "tiny.pt")
    edits = {
        "computed-default": lambda c: c.replace("t: Tensor) -> Tensor:", "t: Tensor, z: int=%s) -> Tensor:" % poke),
        "computed-constant": lambda c: c.replace("  training : bool\n", "  training : bool\n  k : Final[int] = %s\n" % poke),
        "computed-annotation": lambda c: c.replace("  training : bool\n",
                                                   "  training : bool\n  __annotations__[\"k\"] = %s\n" % poke),
    }
    for name, edit in edits.items():
        rewrite_zip(tiny, os.path.join(out, name + ".pt"),
                    lambda record, data: ((edit(data.decode()).encode() if record.endswith("code/__torch__.py")
                                           else data), False))
    with open(os.path.join(out, "computed-default.pt"), "rb") as f:
        write_checkpoint(os.path.join(out, "computed-default.d2dpo"), f.read())


def hostile_pickles(out):
    """tiny.pt with its data.pkl (or a debug pickle) edited as only an editor of the zip would:
    LibTorch 1.13's unpickler trusts each of these (it pops without looking, reads memo slots it
    never set, lays a tensor over its storage without asking whether it fits)."""
    tiny = os.path.join(out, "tiny.pt")

    def ops(data):
        return [(op.name, arg, pos) for op, arg, pos in pickletools.genops(data)]

    def first_after_persid(data):
        """The position and length of the storage's element count and of the tensor's offset."""
        listed = ops(data)
        i = next(k for k, (name, _, _) in enumerate(listed) if name == "BINPERSID")
        numel = listed[i - 2]  # ... numel, TUPLE, BINPERSID
        j = i + 1 + (listed[i + 1][0] == "BINPUT")
        offset = listed[j]
        end = lambda k: listed[k + 1][2]
        return (numel[2], end(i - 2)), (offset[2], end(j))

    def splice(data, span, new):
        return data[:span[0]] + new + data[span[1]:]

    big = b"J" + struct.pack("<i", 1000000)
    edits = {
        "storage-past-record": lambda d: splice(d, first_after_persid(d)[0], big),
        "tensor-past-storage": lambda d: splice(d, first_after_persid(d)[1], big),
        "pickle-underflow": lambda d: d[:2] + b"t" + d[2:],
        "pickle-unknown-opcode": lambda d: d[:2] + b"I0\n" + d[2:],
        "pickle-foreign-global": lambda d: d.replace(b"collections\nOrderedDict\n", b"builtins\neval\n", 1),
        "pickle-unset-memo": lambda d: d[:2] + b"h\xfa" + d[2:],
    }
    for name, edit in edits.items():
        rewrite_zip(tiny, os.path.join(out, name + ".pt"),
                    lambda record, data: ((edit(data) if record.endswith("/data.pkl") else data), False))
    # A value cast to an unrelated type without a test: TorchScript never writes it.
    cast = lambda c: c.replace("    head = self.head\n", "    head = self.head\n    n = unchecked_cast(List[int], t)[0]\n") \
        .replace("torch.add(_0, _1), )", "torch.add(torch.add(_0, _1), n), )")
    # Everything is a subtype of Any: the embedding cast to a Linear, whose forward reads its slots.
    from_any = lambda c: c.replace("    head = self.head\n", "    head = self.head\n"
                                   "    anything = annotate(List[Any], [self.embed])\n"
                                   "    head = unchecked_cast(__torch__.torch.nn.modules.linear.Linear, anything[0])\n")
    rewrite_zip(tiny, os.path.join(out, "cast-from-any.pt"),
                lambda record, data: ((from_any(data.decode()).encode() if record.endswith("code/__torch__.py")
                                       else data), False))
    rewrite_zip(tiny, os.path.join(out, "unchecked-cast.pt"),
                lambda record, data: ((cast(data.decode()).encode() if record.endswith("code/__torch__.py") else data),
                                      False))
    rewrite_zip(tiny, os.path.join(out, "debug-pickle-underflow.pt"),
                lambda record, data: ((data[:2] + b"t" + data[2:]) if record.endswith(".debug_pkl") else data, False))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    torch.jit.script(Tiny()).save(os.path.join(out, "tiny.pt"))
    for name, cls in [("one-argument", OneArgument), ("wrong-shape", WrongShape), ("not-finite", NotFinite),
                      ("throws", Throws), ("loops", Loops), ("not-finite-in-a-band", NotFiniteInABand),
                      ("not-finite-in-a-narrow-band", NotFiniteInANarrowBand),
                      ("wrong-shape-above-four", WrongShapeAboveFour), ("loops-on-large-batches", LoopsOnLargeBatches),
                      ("warns-loudly", WarnsLoudly)]:
        torch.jit.script(cls()).save(os.path.join(out, name + ".pt"))
    victim = os.path.join(out, "victim.sh")
    with open(victim, "w") as f:
        f.write("echo untouched\n")
    for name, cls in [("writes-a-file", WritesAFile), ("saves-a-file", SavesAFile),
                      ("writes-while-loading", WritesWhileLoading)]:
        torch.jit.script(cls(victim)).save(os.path.join(out, name + ".pt"))
    for name, cls in [("searches-out-of-bounds", SearchesOutOfBounds), ("uses-torchbind", UsesTorchBind),
                      ("sets-by-method", SetsByMethod)]:
        torch.jit.script(cls()).save(os.path.join(out, name + ".pt"))
    scripted, _library = custom_op_model()
    scripted.save(os.path.join(out, "custom-op.pt"))
    # Zip bombs: a code record and a tensor record that inflate to far more than the file holds.
    tiny = os.path.join(out, "tiny.pt")
    rewrite_zip(tiny, os.path.join(out, "code-bomb.pt"),
                lambda name, data: (data + b"#" * (100 << 20), True) if name.endswith("code/__torch__.py")
                else (data, False))
    rewrite_zip(tiny, os.path.join(out, "data-bomb.pt"),
                lambda name, data: (data + bytes(300 << 20), True) if "/data/0" in name else (data, False))
    # A checkpoint whose payload is itself such an archive (the .d2dpo header over its bytes).
    with open(os.path.join(out, "writes-while-loading.pt"), "rb") as f:
        payload = f.read()
    write_checkpoint(os.path.join(out, "writes-while-loading.d2dpo"), payload)
    loader_bypasses(out)
    computed_while_loading(out, victim)
    hostile_pickles(out)
    torch.save(Tiny().state_dict(), os.path.join(out, "state-dict.pt"))
    torch.save(Tiny().state_dict(), os.path.join(out, "legacy-pickle.pt"), _use_new_zipfile_serialization=False)

    vocabularies = {
        "tiny": {"symbols": {"0": 0, "1": 1}, "mask": 2},
        "out-of-range": {"symbols": {"0": 0, "1": 1}, "mask": 7},
        "no-mask": {"symbols": {"0": 0, "1": 1}},
        "collide": {"symbols": {"0": 0, "1": 0}, "mask": 2},
        "mask-is-symbol": {"symbols": {"0": 0, "1": 1}, "mask": 1},
        "long-symbol": {"symbols": {"ab": 0, "1": 1}, "mask": 2},
    }
    for name, vocabulary in vocabularies.items():
        with open(os.path.join(out, name + ".vocab.json"), "w") as f:
            json.dump(vocabulary, f)
    # Crafted to crash a recursive parser (100,000 levels) and to write to the terminal.
    with open(os.path.join(out, "deep.vocab.json"), "w") as f:
        f.write('{"symbols": ' + '{"a": ' * 100000 + "1" + "}" * 100000 + ', "mask": 2}')
    with open(os.path.join(out, "deep-begin.vocab.json"), "w") as f:
        f.write('{"symbols": {"0": 0, "1": 1}, "mask": 2, "begin": ' + "[" * 100000 + "]" * 100000 + "}")
    with open(os.path.join(out, "control.vocab.json"), "w") as f:
        json.dump({"symbols": {"\x1b": 0, "1": 1}, "mask": 2}, f)
    with open(os.path.join(out, "nul.vocab.json"), "wb") as f:  # the parser would stop at the NUL
        f.write(b'{"symbols": {"0": 0, "1": 1}, "mask": 2}\x00{"mask": 1}')
    with open(os.path.join(out, "twice-mask.vocab.json"), "w") as f:
        f.write('{"symbols": {"0": 0, "1": 1}, "mask": 2, "mask": 1}\n')
    print("ok")


if __name__ == "__main__":
    main()
