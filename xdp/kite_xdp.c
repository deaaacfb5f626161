// Kite's XDP program: hands NDN frames and Kite's UDP datagrams of one interface to Kite's
// AF_XDP sockets and passes every other frame (ARP, IP, TCP, SSH, ...) to the kernel untouched.
//
// An NDN frame is an Ethernet frame of EtherType 0x8624 (NDN's, the NDN-over-Ethernet
// convention NFD uses), untagged. A UDP datagram is Kite's when it is untagged, whole (IPv4:
// neither a fragment nor the first of several; IPv6: UDP right after the fixed header, no
// extension header) and its destination address and port are in `kite_udp_dsts`, which user
// space fills with the (address, port) pairs its UDP listeners serve on the interface. Such a
// frame goes to an AF_XDP socket of the receive queue it arrived on: `kite_xsks` holds one
// per (queue, lane), a lane being one of Kite's I/O threads, at index queue * MAX_LANES +
// lane. Which lane: the one `kite_steer` names home (the I/O thread that owns the channel),
// unless steering is on and the frame is an NDN packet another lane's forwarding shard
// handles: an Interest goes to the lane of its name's entry in the Name Dispatch Table
// (`kite_ndt`, filled by user space from the forwarder's own table and name hash key), a
// Data or Nack with a Kite PIT token to the lane of the shard the token names. So each packet
// is read by the thread that forwards it, and none crosses threads on its way in (the input
// dispatch "NDN-DPDK: NDN Forwarding at 100 Gbps on Commodity Hardware" leaves for future
// work). Fragments, link-reliability frames and anything else go home, whose face state they
// need. When a queue has no socket for the lane, the frame goes home; with no home socket
// either, to the kernel (bpf_redirect_map's fallback action), where an AF_PACKET or UDP
// socket may still read it. Checksums and lengths beyond the headers' own are left to user
// space, which must copy the payload anyway. Every verdict is counted per CPU in
// `kite_counts`, and every redirect in `kite_lanes` by lane, so an operator can tell what the
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
enum {
  BPF_MAP_TYPE_HASH = 1,
  BPF_MAP_TYPE_ARRAY = 2,
  BPF_MAP_TYPE_PERCPU_ARRAY = 6,
  BPF_MAP_TYPE_XSKMAP = 17
};

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_redirect_map)(void *map, __u64 key, __u64 flags) = (void *)51;

// The most receive queues an interface's sockets can sit on.
#define MAX_QUEUES 64
// The most lanes (I/O threads) with a socket on each queue.
#define MAX_LANES 64
// Entries of the Name Dispatch Table: 2^16, the forwarder's default and largest size here.
#define NDT_SLOTS 65536
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
// NDN frames sent to a lane other than home (counted with COUNT_NDN too).
#define COUNT_STEERED 4
#define COUNTS 5

// Bounds of the steering parser (the verifier needs every loop bounded; a frame past them
// goes home). Name components walked, LpPacket header fields skipped, and octets of name
// hashed.
#define STEER_COMPONENTS 16
#define STEER_FIELDS 8
#define STEER_HASHED 256
// Offsets into a frame are masked with this to bound them for the verifier: a UMEM frame is
// at most 4 KiB.
#define OFF_MASK 0x1fff

// NDN TLV types (NDN Packet Format v0.3, NDNLPv2).
#define TLV_INTEREST 0x05
#define TLV_DATA 0x06
#define TLV_NAME 0x07
#define TLV_DIGEST 0x01
#define LP_PACKET 0x64
#define LP_FRAGMENT 0x50
#define LP_SEQUENCE 0x51
#define LP_FRAG_INDEX 0x52
#define LP_FRAG_COUNT 0x53
#define LP_PIT_TOKEN 0x62
#define LP_NACK 0x0320
#define LP_ACK 0x0344
#define LP_TX_SEQUENCE 0x0348
// The length of Kite's PIT tokens; their first octet is the forwarding shard.
#define KITE_TOKEN_LEN 6

// A key of kite_udp_dsts: an IPv6 address, or an IPv4 one mapped into IPv6 (::ffff:a.b.c.d),
// and a port, both as on the wire.
struct udp_dst {
  __u8 addr[16];
  __u8 port[2];
  __u8 pad[2];
};

// How frames are steered. With `on` zero, every NDN frame goes to `home`.
struct steer {
  __u32 home;
  __u32 on;
  // Components of an Interest's name the NDT hashes (0xffffffff: the whole name).
  __u32 prefix_len;
  // Slots of kite_ndt in use, less one (a power of two less one).
  __u32 ndt_mask;
  // The forwarder's SipHash-1-3 key.
  __u64 k0;
  __u64 k1;
  // The lane of each forwarding shard, by a PIT token's first octet.
  __u8 token_lanes[256];
};

struct {
  __uint(type, BPF_MAP_TYPE_XSKMAP);
  __uint(max_entries, MAX_QUEUES * MAX_LANES);
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
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, MAX_LANES);
  __type(key, __u32);
  __type(value, __u64);
} kite_lanes SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, MAX_UDP_DSTS);
  __type(key, struct udp_dst);
  __type(value, __u8);
} kite_udp_dsts SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct steer);
} kite_steer SEC(".maps");

// The lane of each slot of the Name Dispatch Table.
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, NDT_SLOTS);
  __type(key, __u32);
  __type(value, __u32);
} kite_ndt SEC(".maps");

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

// The `n` octets at offset `off` of the frame, or null when they run past its end. An offset
// past OFF_MASK is past any frame's end too; the mask only tells the verifier so, and the
// empty asm keeps the compiler from dropping the mask as redundant after the comparison
// (the verifier does not carry the comparison's bound over to the recomputed offset).
static inline __attribute__((always_inline)) const __u8 *octets(const __u8 *data,
                                                                 const __u8 *end, __u32 off,
                                                                 __u32 n) {
  if (off > OFF_MASK)
    return 0;
  asm volatile("" : "+r"(off));
  const __u8 *p = data + (off & OFF_MASK);
  if (p + n > end)
    return 0;
  return p;
}

// Reads the TLV VAR-NUMBER at *off (advanced past it) into *out; 0 when it runs past `end`
// or is an 8-octet one (no type or length a frame holds).
static inline __attribute__((always_inline)) int varnum(const __u8 *data, const __u8 *end,
                                                         __u32 *off, __u32 *out) {
  const __u8 *p = octets(data, end, *off, 1);
  if (!p)
    return 0;
  __u8 first = p[0];
  if (first < 253) {
    *out = first;
    *off += 1;
    return 1;
  }
  if (first == 253) {
    p = octets(data, end, *off, 3);
    if (!p)
      return 0;
    *out = ((__u32)p[1] << 8) | p[2];
    *off += 3;
    return 1;
  }
  if (first == 254) {
    p = octets(data, end, *off, 5);
    if (!p)
      return 0;
    *out = ((__u32)p[1] << 24) | ((__u32)p[2] << 16) | ((__u32)p[3] << 8) | p[4];
    *off += 5;
    return 1;
  }
  return 0;
}

// What kite_tlv returns for a TLV that runs past the frame or is longer than any frame.
#define NO_TLV 0xffffffffffffffffULL

// The TLV whose type is at offset `off` of the frame: its type, its length and its value's
// offset, packed as type << 32 | length << 16 | offset (a length is at most OFF_MASK, an
// offset below 2^16); NO_TLV when its type and length run past the frame's end, or its
// length is past any frame's.
//
// The steering parser reads every TLV through this one function, and the functions below
// through one another, as BPF-to-BPF calls the kernel's verifier checks once each, whatever
// the frame (global functions): inlined, the walks over up to STEER_COMPONENTS components
// and STEER_FIELDS fields multiply into more paths than the verifier explores.
__attribute__((noinline)) __u64 kite_tlv(struct xdp_md *ctx, __u32 off) {
  const __u8 *data = (const __u8 *)(long)ctx->data;
  const __u8 *end = (const __u8 *)(long)ctx->data_end;
  __u32 type, len;
  if (!varnum(data, end, &off, &type) || !varnum(data, end, &off, &len) || len > OFF_MASK)
    return NO_TLV;
  return ((__u64)type << 32) | ((__u64)len << 16) | (off & 0xffff);
}

#define TLV_TYPE(t) ((__u32)((t) >> 32))
#define TLV_LEN(t) ((__u32)((t) >> 16) & 0xffff)
#define TLV_VALUE(t) ((__u32)(t) & 0xffff)

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

struct sip {
  __u64 v0, v1, v2, v3;
};

static inline __attribute__((always_inline)) void sip_round(struct sip *s) {
  s->v0 += s->v1;
  s->v1 = ROTL(s->v1, 13) ^ s->v0;
  s->v0 = ROTL(s->v0, 32);
  s->v2 += s->v3;
  s->v3 = ROTL(s->v3, 16) ^ s->v2;
  s->v0 += s->v3;
  s->v3 = ROTL(s->v3, 21) ^ s->v0;
  s->v2 += s->v1;
  s->v1 = ROTL(s->v1, 17) ^ s->v2;
  s->v2 = ROTL(s->v2, 32);
}

static inline __attribute__((always_inline)) void sip_compress(struct sip *s, __u64 m) {
  s->v3 ^= m;
  sip_round(s);
  s->v0 ^= m;
}

// Eight octets at p, little-endian.
static inline __attribute__((always_inline)) __u64 le64(const __u8 *p) {
  return (__u64)p[0] | ((__u64)p[1] << 8) | ((__u64)p[2] << 16) | ((__u64)p[3] << 24) |
         ((__u64)p[4] << 32) | ((__u64)p[5] << 40) | ((__u64)p[6] << 48) |
         ((__u64)p[7] << 56);
}

// SipHash-1-3 (the forwarder's name hash, "SipHash: a fast short-input PRF"), under the key
// in kite_steer, of the `len` octets at offset `at` of the frame, which the caller has checked
// lie in the frame; `len` is below STEER_HASHED.
__attribute__((noinline)) __u64 kite_name_hash(struct xdp_md *ctx, __u32 at, __u32 len) {
  const __u8 *data = (const __u8 *)(long)ctx->data;
  const __u8 *end = (const __u8 *)(long)ctx->data_end;
  __u32 zero = 0;
  const struct steer *cfg = bpf_map_lookup_elem(&kite_steer, &zero);
  if (!cfg)
    return 0;
  struct sip s = {
      cfg->k0 ^ 0x736f6d6570736575ULL,
      cfg->k1 ^ 0x646f72616e646f6dULL,
      cfg->k0 ^ 0x6c7967656e657261ULL,
      cfg->k1 ^ 0x7465646279746573ULL,
  };
  __u32 words = len / 8;
  for (__u32 i = 0; i < STEER_HASHED / 8; i++) {
    if (i >= words)
      break;
    const __u8 *p = octets(data, end, at + i * 8, 8);
    if (!p)
      return 0;
    sip_compress(&s, le64(p));
  }
  __u32 tail_len = len & 7;
  __u64 tail = 0;
  for (__u32 j = 0; j < 7; j++) {
    if (j >= tail_len)
      break;
    const __u8 *q = octets(data, end, at + words * 8 + j, 1);
    if (!q)
      return 0;
    tail |= (__u64)q[0] << (8 * j);
  }
  __u64 b = ((__u64)len << 56) | tail;
  sip_compress(&s, b);
  s.v2 ^= 0xff;
  sip_round(&s);
  sip_round(&s);
  sip_round(&s);
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

// What the steering functions return for a frame that goes home.
#define HOME 0xffffffff

// The lane of the Interest whose type is at offset `off` of the frame, by the Name Dispatch
// Table: the hash of its name's first prefix_len components (fewer when the name is shorter;
// one fewer when a name that short ends in an implicit digest, which a Data's own name lacks),
// looked up in kite_ndt. HOME when the name is past the parser's bounds or malformed. The
// forwarder dispatches a Nack without a token the same way.
__attribute__((noinline)) __u32 kite_interest_lane(struct xdp_md *ctx, __u32 off) {
  __u32 zero = 0;
  const struct steer *cfg = bpf_map_lookup_elem(&kite_steer, &zero);
  if (!cfg)
    return HOME;
  __u32 prefix_len = cfg->prefix_len, mask = cfg->ndt_mask;
  __u64 t = kite_tlv(ctx, off);
  if (t == NO_TLV || TLV_TYPE(t) != TLV_INTEREST)
    return HOME;
  t = kite_tlv(ctx, TLV_VALUE(t));
  if (t == NO_TLV || TLV_TYPE(t) != TLV_NAME)
    return HOME;
  __u32 name = TLV_VALUE(t);
  __u32 name_end = name + TLV_LEN(t);
  // The end of the components walked, and of the one before the last.
  __u32 at = name, before = name, last_type = 0, n = 0;
  for (__u32 i = 0; i < STEER_COMPONENTS; i++) {
    if (n == prefix_len || at >= name_end)
      break;
    __u64 c = kite_tlv(ctx, at);
    if (c == NO_TLV)
      return HOME;
    before = at;
    at = TLV_VALUE(c) + TLV_LEN(c);
    last_type = TLV_TYPE(c);
    n++;
  }
  if (at > name_end)
    return HOME;
  if (at < name_end && n != prefix_len)
    return HOME; // more components than the parser walks
  __u32 hashed = at;
  // The name ends here, with at most prefix_len components: a last digest does not count.
  if (at == name_end && n > 0 && last_type == TLV_DIGEST)
    hashed = before;
  __u32 len = hashed - name;
  if (len >= STEER_HASHED || hashed > ctx->data_end - ctx->data)
    return HOME;
  __u32 slot = (__u32)kite_name_hash(ctx, name, len) & mask;
  __u32 *lane = bpf_map_lookup_elem(&kite_ndt, &slot);
  return lane ? *lane : HOME;
}

// The lane of the NDN packet at offset `off` of the frame (an NDN frame's payload), or HOME:
// see the top of this file.
__attribute__((noinline)) __u32 kite_lane_of(struct xdp_md *ctx, __u32 off) {
  const __u8 *data = (const __u8 *)(long)ctx->data;
  const __u8 *end = (const __u8 *)(long)ctx->data_end;
  __u32 zero = 0;
  const struct steer *cfg = bpf_map_lookup_elem(&kite_steer, &zero);
  if (!cfg)
    return HOME;
  const __u8 *p = octets(data, end, off, 1);
  if (!p)
    return HOME;
  if (p[0] == TLV_INTEREST)
    return kite_interest_lane(ctx, off);
  __u64 t = kite_tlv(ctx, off);
  if (t == NO_TLV || TLV_TYPE(t) != LP_PACKET)
    return HOME;
  off = TLV_VALUE(t);
  __u32 token = 0, nack = 0;
  for (__u32 i = 0; i < STEER_FIELDS; i++) {
    t = kite_tlv(ctx, off);
    if (t == NO_TLV)
      return HOME;
    __u32 value = TLV_VALUE(t), len = TLV_LEN(t);
    switch (TLV_TYPE(t)) {
    case LP_FRAGMENT: {
      const __u8 *f = octets(data, end, value, 1);
      if (!f)
        return HOME;
      if (token && (f[0] == TLV_DATA || (f[0] == TLV_INTEREST && nack))) {
        const __u8 *k = octets(data, end, token, 1);
        if (!k)
          return HOME;
        return cfg->token_lanes[k[0]];
      }
      // An Interest, or a Nack without a token: its Interest's name decides.
      if (f[0] == TLV_INTEREST)
        return kite_interest_lane(ctx, value);
      return HOME;
    }
    case LP_SEQUENCE:
    case LP_FRAG_INDEX:
    case LP_FRAG_COUNT:
    case LP_TX_SEQUENCE:
    case LP_ACK:
      return HOME;
    case LP_PIT_TOKEN:
      if (len == KITE_TOKEN_LEN)
        token = value;
      break;
    case LP_NACK:
      nack = 1;
      break;
    }
    off = value + len;
  }
  return HOME;
}

// Redirects an NDN frame, or one of Kite's UDP datagrams, to the socket of `lane` on the
// queue it arrived on, or of home when that queue has no socket for the lane.
static inline __attribute__((always_inline)) long redirect(struct xdp_md *ctx, __u32 lane,
                                                           __u32 home) {
  __u32 queue = ctx->rx_queue_index;
  if (queue >= MAX_QUEUES)
    return XDP_PASS;
  if (lane >= MAX_LANES)
    lane = home;
  __u32 key = queue * MAX_LANES + lane;
  if (lane != home && !bpf_map_lookup_elem(&kite_xsks, &key)) {
    lane = home;
    key = queue * MAX_LANES + home;
  }
  if (lane != home)
    count(COUNT_STEERED);
  __u64 *n = bpf_map_lookup_elem(&kite_lanes, &lane);
  if (n)
    *n += 1;
  return bpf_redirect_map(&kite_xsks, key, XDP_PASS);
}

SEC("xdp")
int kite_xdp(struct xdp_md *ctx) {
  const __u8 *data = (const __u8 *)(long)ctx->data;
  const __u8 *end = (const __u8 *)(long)ctx->data_end;
  if (data + ETH_HLEN > end) {
    count(COUNT_RUNT);
    return XDP_PASS;
  }
  __u32 zero = 0;
  const struct steer *cfg = bpf_map_lookup_elem(&kite_steer, &zero);
  if (!cfg)
    return XDP_PASS;
  __u32 home = cfg->home < MAX_LANES ? cfg->home : 0;
  __u16 type = ((__u16)data[12] << 8) | data[13];
  if (type == ETHERTYPE_NDN) {
    count(COUNT_NDN);
    __u32 lane = cfg->on ? kite_lane_of(ctx, ETH_HLEN) : home;
    return redirect(ctx, lane, home);
  }
  if (is_kites_udp(type, data + ETH_HLEN, end)) {
    count(COUNT_UDP);
    return redirect(ctx, home, home);
  }
  count(COUNT_PASSED);
  return XDP_PASS;
}

char _license[] SEC("license") = "Dual MIT/GPL";
