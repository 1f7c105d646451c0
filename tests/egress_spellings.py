"""Spellings of addresses no outgoing request may go to, as a lead might type them: the
red-team table both the policy's tests and the doors' tests run through."""

REFUSED = [
    # cloud metadata and link-local
    "http://169.254.169.254/latest/meta-data/",
    "http://[fe80::1]/v1",
    "http://[fe80::1%25eth0]/v1",
    # private ranges
    "http://10.0.0.1/v1",
    "https://10.255.255.254:8443/v1",
    "http://172.16.0.1/",
    "http://192.168.1.1/v1",
    "http://[fd00::1]/v1",
    # loopback, every spelling
    "http://127.0.0.1/v1",
    "http://127.0.0.1./v1",
    "http://127.1/v1",
    "http://127.0.1/v1",
    "http://2130706433/v1",
    "http://0177.0.0.1/v1",
    "http://0x7f.0.0.1/v1",
    "http://0x7f000001/v1",
    "http://017700000001/v1",
    "http://[::1]/v1",
    "http://[0:0:0:0:0:0:0:1]/v1",
    "http://[::ffff:127.0.0.1]/v1",
    "http://[::ffff:7f00:1]/v1",
    "http://[::ffff:169.254.169.254]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[2002:7f00:1::]/",
    "http://localhost:5432/",
    "http://LOCALHOST./v1",
    "http://db.localhost/v1",
    # unspecified, shared, multicast, reserved, broadcast
    "http://0/v1",
    "http://0.0.0.0/v1",
    "http://[::]/v1",
    "http://100.64.0.1/v1",
    "http://224.0.0.1/v1",
    "http://[ff02::1]/v1",
    "http://240.0.0.1/v1",
    "http://255.255.255.255/v1",
    "http://192.0.2.1/v1",
    "http://[2001:db8::1]/v1",
]
