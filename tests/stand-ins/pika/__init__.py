# A stand-in for python3-pika that fails to import, as on a machine without it: the real-broker
# harness's self-test must not need a broker client (tests/CMakeLists.txt).
raise ImportError("stand-in: the pika module is not installed")
