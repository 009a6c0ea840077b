"""Remote-call tests may use the virtual audio device (``--listen``)."""

from tests.support.pulse import pulse_server

__all__ = ["pulse_server"]
