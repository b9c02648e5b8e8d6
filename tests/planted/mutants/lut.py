"""Mutants of the LUT translation (spec sections 5 and 6: a non-negative slot is translated
through ``full_to_swa_index_mapping`` at ``min(slot, lut_len - 1)``; a negative one passes
through): each overrides :meth:`Planner.lut_index` or :meth:`Planner.translate`."""

from __future__ import annotations

from tests.planted.mutants.base import Planner, launcher, wrap


class _LutClampToLen(Planner):
    """Bug: a slot past the LUT is clamped to lut_len instead of lut_len - 1 (one past the end)."""

    def lut_index(self, slot, lut_len):
        return min(slot, lut_len) if lut_len > 0 and slot >= 0 else None


class _NegativeSlotTranslated(Planner):
    """Bug: a negative slot is translated too, at the index Python's wrap gives (lut[-1], ...)."""

    def lut_index(self, slot, lut_len):
        if lut_len <= 0:
            return None
        return slot % lut_len if slot < 0 else min(slot, lut_len - 1)


class _SlotZeroUntranslated(Planner):
    """Bug: only slots > 0 are translated, so slot 0 (the dummy slot) passes through as 0."""

    def lut_index(self, slot, lut_len):
        return super().lut_index(slot, lut_len) if slot != 0 else None


class _LutOnlyWithWindow(Planner):
    """Bug: seeds are translated through the LUT only when swa_window_size > 0."""

    def translate(self, slots, plan):
        return super().translate(slots, plan) if plan.swa_window_size > 0 else slots


class _SeedInt32(Planner):
    """Bug: the translated seed goes through an int32 register, so a LUT entry past 2^31 wraps."""

    def translate(self, slots, plan):
        return [wrap(s, 32) for s in super().translate(slots, plan)]


class _LutClampSticky(Planner):
    """Bug: once one slot is clamped to lut_len - 1, every later slot is read there too."""

    def translate(self, slots, plan):
        out, clamped = [], False
        for slot in slots:
            clamped = clamped or (plan.lut_len > 0 and slot >= plan.lut_len)
            out.append(plan.lut_len if clamped and slot >= 0 else slot)  # lut_index clamps it
        return super().translate(out, plan)


class _NegativeSlotClampedToZero(Planner):
    """Bug: the LUT index is clamped on both sides, so a negative slot is translated at lut[0]."""

    def lut_index(self, slot, lut_len):
        return max(min(slot, lut_len - 1), 0) if lut_len > 0 else None


lut_clamp_to_len = launcher(_LutClampToLen)
negative_slot_translated = launcher(_NegativeSlotTranslated)
slot_zero_untranslated = launcher(_SlotZeroUntranslated)
lut_only_with_window = launcher(_LutOnlyWithWindow)
seed_int32 = launcher(_SeedInt32)
lut_clamp_sticky = launcher(_LutClampSticky)
negative_slot_clamped_to_zero = launcher(_NegativeSlotClampedToZero)
