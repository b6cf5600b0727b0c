"""The broker client.  pika is imported only where a real broker is used (need_pika): the tests,
--help, --list, --table and --write-grid-scenarios run without python3-pika."""

import logging
import os
import sys

pika = None


def need_pika():
    global pika
    if pika is not None:
        return pika
    try:
        import pika as client
    except ImportError:  # pyenv / venv python without Debian's python3-pika: retry with the system one
        if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") \
                and not os.environ.get("BROKERSIM_CMP_REEXEC"):
            os.environ["BROKERSIM_CMP_REEXEC"] = "1"
            os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
        sys.exit("compare.py: the 'pika' module is missing: apt-get install -y python3-pika")
    logging.getLogger("pika").setLevel(logging.CRITICAL)  # pika logs connection teardown noise at ERROR
    pika = client
    return pika
