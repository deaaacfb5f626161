// Kite's XDP program: hands NDN frames of one interface to Kite's AF_XDP sockets and passes
// every other frame (ARP, IP, TCP, SSH, ...) to the kernel untouched.
//
// An NDN frame is an Ethernet frame of EtherType 0x8624 (NDN's, the NDN-over-Ethernet
// convention NFD uses), untagged. Such a frame goes to the socket in `kite_xsks` at the
// index of the receive queue it arrived on; when that queue has no socket, the frame goes to
// the kernel (bpf_redirect_map's fallback action), where an AF_PACKET socket may still read
// it. Every verdict is counted per CPU in `kite_counts`, so an operator can tell what the
// program did with an interface's traffic.
//
// The parser has a user-space twin in Rust (kite-face's xdp::filter), which the tests hold to
// the same verdicts on every input.
//
// Built with `make -C xdp` (clang -O2 -target bpf); the object ships inside the kite binary.

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;

#define SEC(name) __attribute__((section(name), used))

struct xdp_md {
  __u32 data;
  __u32 data_end;
  __u32 data_meta;
  __u32 ingress_ifindex;
  __u32 rx_queue_index;
  __u32 egress_ifindex;
};

// Maps as BTF declares them (the ".maps" section, built with -g): the form libbpf 1.0 and
// later read, so `ip link set dev IF xdp obj kite_xdp.o sec xdp` and bpftool load the object
// as Kite does. A member's type carries each attribute: `int (*type)[N]` says N.
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name

enum { XDP_ABORTED, XDP_DROP, XDP_PASS, XDP_TX, XDP_REDIRECT };
enum { BPF_MAP_TYPE_PERCPU_ARRAY = 6, BPF_MAP_TYPE_XSKMAP = 17 };

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_redirect_map)(void *map, __u64 key, __u64 flags) = (void *)51;

// The most receive queues an interface's sockets can sit on.
#define MAX_QUEUES 64
#define ETH_HLEN 14
#define ETHERTYPE_NDN 0x8624

// Verdicts, as indices into kite_counts.
#define COUNT_NDN 0
#define COUNT_PASSED 1
#define COUNT_RUNT 2
#define COUNTS 3

struct {
  __uint(type, BPF_MAP_TYPE_XSKMAP);
  __uint(max_entries, MAX_QUEUES);
  __type(key, __u32);
  __type(value, __u32);
} kite_xsks SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, COUNTS);
  __type(key, __u32);
  __type(value, __u64);
} kite_counts SEC(".maps");

static inline void count(__u32 what) {
  __u64 *n = bpf_map_lookup_elem(&kite_counts, &what);
  if (n)
    *n += 1;
}

SEC("xdp")
int kite_xdp(struct xdp_md *ctx) {
  const __u8 *data = (const __u8 *)(long)ctx->data;
  const __u8 *end = (const __u8 *)(long)ctx->data_end;
  if (data + ETH_HLEN > end) {
    count(COUNT_RUNT);
    return XDP_PASS;
  }
  __u16 type = ((__u16)data[12] << 8) | data[13];
  if (type != ETHERTYPE_NDN) {
    count(COUNT_PASSED);
    return XDP_PASS;
  }
  count(COUNT_NDN);
  return bpf_redirect_map(&kite_xsks, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "Dual MIT/GPL";
