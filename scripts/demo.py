"""A python-ndn producer and consumer talking through a running forwarder (run.sh's demo).

The producer registers /kite/demo with a signed rib/register command, as any NFD app does;
the consumer then fetches a few Data through the forwarder and prints each with its RTT.
Usage: demo.py SOCKET_PATH
"""
import asyncio
import sys
import time

from ndn.app import NDNApp
from ndn.encoding import Name
from ndn.security import KeychainDigest
from ndn.transport.stream_face import UnixFace

SOCKET = sys.argv[1]
PREFIX = "/kite/demo"


async def consume(producer: NDNApp, consumer: NDNApp) -> None:
    await asyncio.sleep(0.3)  # let the registration land
    for i in range(1, 4):
        t0 = time.perf_counter()
        name, _meta, content = await consumer.express_interest(
            f"{PREFIX}/hello/{i}", must_be_fresh=True, lifetime=2000
        )
        rtt = (time.perf_counter() - t0) * 1000
        print(f"  consumer got {Name.to_str(name)}: {bytes(content).decode()!r} in {rtt:.2f} ms")
    producer.shutdown()
    consumer.shutdown()


def main() -> None:
    producer = NDNApp(face=UnixFace(SOCKET), keychain=KeychainDigest())
    consumer = NDNApp(face=UnixFace(SOCKET), keychain=KeychainDigest())

    @producer.route(PREFIX)
    def on_interest(name, _param, _app_param):
        producer.put_data(name, f"hello from {Name.to_str(name)}".encode(), freshness_period=1000)

    async def both():
        tasks = [
            asyncio.create_task(producer.main_loop(None)),
            asyncio.create_task(consumer.main_loop(consume(producer, consumer))),
        ]
        done, _ = await asyncio.wait(tasks, timeout=15)
        if len(done) < 2:
            raise SystemExit("demo: no answer through the forwarder within 15 s")

    asyncio.run(both())


if __name__ == "__main__":
    main()
