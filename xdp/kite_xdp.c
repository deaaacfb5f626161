// Kite's XDP program: hands NDN frames and Kite's UDP datagrams of one interface to Kite's
// AF_XDP sockets and passes every other frame (ARP, IP, TCP, SSH, ...) to the kernel untouched.
//
// An NDN frame is an Ethernet frame of EtherType 0x8624 (NDN's, the NDN-over-Ethernet
// convention NFD uses), untagged. A UDP datagram is Kite's when it is untagged, whole (IPv4:
// neither a fragment nor the first of several; IPv6: UDP right after the fixed header, no
// extension header) and its destination address and port are in `kite_udp_dsts`, which user
// space fills with the (address, port) pairs its UDP listeners serve on the interface. Such a
// frame goes to the socket in `kite_xsks` at the index of the receive queue it arrived on;
// when that queue has no socket, the frame goes to the kernel (bpf_redirect_map's fallback
// action), where an AF_PACKET or UDP socket may still read it. Checksums and lengths beyond
// the headers' own are left to user space, which must copy the payload anyway. Every verdict
// is counted per CPU in `kite_counts`, so an operator can tell what the program did with an
// interface's traffic.
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
enum { BPF_MAP_TYPE_HASH = 1, BPF_MAP_TYPE_PERCPU_ARRAY = 6, BPF_MAP_TYPE_XSKMAP = 17 };

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_redirect_map)(void *map, __u64 key, __u64 flags) = (void *)51;

// The most receive queues an interface's sockets can sit on.
#define MAX_QUEUES 64
#define ETH_HLEN 14
#define ETHERTYPE_NDN 0x8624
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_IPV6 0x86dd
#define IPPROTO_UDP 17
#define IPV6_HLEN 40
#define UDP_HLEN 8
// The (address, port) pairs kite_udp_dsts has room for.
#define MAX_UDP_DSTS 256

// Verdicts, as indices into kite_counts.
#define COUNT_NDN 0
#define COUNT_PASSED 1
#define COUNT_RUNT 2
#define COUNT_UDP 3
#define COUNTS 4

// A key of kite_udp_dsts: an IPv6 address, or an IPv4 one mapped into IPv6 (::ffff:a.b.c.d),
// and a port, both as on the wire.
struct udp_dst {
  __u8 addr[16];
  __u8 port[2];
  __u8 pad[2];
};

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

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, MAX_UDP_DSTS);
  __type(key, struct udp_dst);
  __type(value, __u8);
} kite_udp_dsts SEC(".maps");

static inline void count(__u32 what) {
  __u64 *n = bpf_map_lookup_elem(&kite_counts, &what);
  if (n)
    *n += 1;
}

// Whether the packet at `ip` (EtherType `type`, the frame ending at `end`) is a whole UDP
// datagram to an (address, port) pair in kite_udp_dsts.
static inline int is_kites_udp(__u16 type, const __u8 *ip, const __u8 *end) {
  struct udp_dst dst = {};
  const __u8 *udp;
  if (type == ETHERTYPE_IPV4) {
    if (ip + 20 > end)
      return 0;
    __u32 ihl = (__u32)(ip[0] & 0x0f) * 4;
    // Version 4, a header of at least 20 octets, UDP, no fragment (MF clear, offset 0).
    if ((ip[0] >> 4) != 4 || ihl < 20 || ip[9] != IPPROTO_UDP || (ip[6] & 0x3f) != 0 ||
        ip[7] != 0)
      return 0;
    udp = ip + ihl;
    if (udp + UDP_HLEN > end)
      return 0;
    dst.addr[10] = 0xff;
    dst.addr[11] = 0xff;
    __builtin_memcpy(&dst.addr[12], ip + 16, 4);
  } else if (type == ETHERTYPE_IPV6) {
    udp = ip + IPV6_HLEN;
    if (udp + UDP_HLEN > end)
      return 0;
    if ((ip[0] >> 4) != 6 || ip[6] != IPPROTO_UDP)
      return 0;
    __builtin_memcpy(dst.addr, ip + 24, 16);
  } else {
    return 0;
  }
  dst.port[0] = udp[2];
  dst.port[1] = udp[3];
  return bpf_map_lookup_elem(&kite_udp_dsts, &dst) != 0;
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
  if (type == ETHERTYPE_NDN) {
    count(COUNT_NDN);
    return bpf_redirect_map(&kite_xsks, ctx->rx_queue_index, XDP_PASS);
  }
  if (is_kites_udp(type, data + ETH_HLEN, end)) {
    count(COUNT_UDP);
    return bpf_redirect_map(&kite_xsks, ctx->rx_queue_index, XDP_PASS);
  }
  count(COUNT_PASSED);
  return XDP_PASS;
}

char _license[] SEC("license") = "Dual MIT/GPL";
