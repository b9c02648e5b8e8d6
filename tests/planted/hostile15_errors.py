"""Planted planners of the fifteenth hostile review (tests/test_hostile15.py): wrong errors whose
own objects lie to the harness's record of a raise (conformance/engine/observe.py ``Raised.of``),
which the judge then compares part by part (conformance/engine/error_parts.py). Each plans like
the reference on a valid call; where the reference raises, each raises another error:

* :func:`metaclass_posing_as_value_error`: an ``Exception`` that is no ``ValueError`` (a server's
  ``except ValueError`` misses it), whose metaclass answers ``__mro__`` and ``__name__`` with the
  built-in ``ValueError``'s, with the documented message and id;
* :func:`text_equal_to_anything`: a real ``ValueError`` whose message and ``error_id`` are ``str``
  subclasses that compare equal to every string (and whose ``__str__`` returns themselves, so
  ``str()`` of them keeps the subclass); it reads ``nothing is wrong here``, id ``any``.
"""

from __future__ import annotations

from tests.planted.hostile6_errors import _documented


class _PosesAsValueError(type):
    """A metaclass whose classes say they are the built-in ``ValueError``: their ``__name__`` and
    their ``__mro__`` (every attribute lookup on the class itself still uses the real one)."""

    @property
    def __mro__(cls):
        return (ValueError, Exception, BaseException, object)

    @property
    def __name__(cls):
        return "ValueError"


class NotAValueError(Exception, metaclass=_PosesAsValueError):
    """An ``Exception``, not a ``ValueError``: ``except ValueError`` does not catch it."""


def metaclass_posing_as_value_error(**kwargs):
    """The reference's plan; where the reference raises, a :class:`NotAValueError` with its very
    message and error id."""
    real = _documented(kwargs)
    if real is None:
        return None
    fake = NotAValueError(str(real))
    fake.error_id = getattr(real, "error_id", None)
    raise fake


class EqualToAnything(str):
    """A ``str`` equal to every object, which stays itself through ``str()``."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = str.__hash__

    def __str__(self):
        return self


class _AnyText(ValueError):
    def __str__(self):
        return EqualToAnything("nothing is wrong here")


def text_equal_to_anything(**kwargs):
    """The reference's plan; where the reference raises, a ``ValueError`` whose message and id
    equal anything (it reads ``nothing is wrong here``, id ``any``)."""
    if _documented(kwargs) is None:
        return None
    fake = _AnyText()
    fake.error_id = EqualToAnything("any")
    raise fake
