// A test fixture: an XDP program that is not Kite's (it passes every frame), for the tests
// that check Kite refuses to replace another program on an interface.
#define SEC(name) __attribute__((section(name), used))

SEC("xdp")
int xdp_pass(void *ctx) { return 2; /* XDP_PASS */ }

char _license[] SEC("license") = "Dual MIT/GPL";
