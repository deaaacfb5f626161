/* Kite strategy ABI: the context a program gets in r1 and the helpers it may call.
 * Build: clang -O2 -target bpf -I include -c NAME.c -o NAME.o
 * See docs/strategy-abi.md. The loader checks every access against this layout. */
#ifndef KITE_STRATEGY_H
#define KITE_STRATEGY_H

typedef unsigned char __u8;
typedef unsigned int __u32;
typedef unsigned long long __u64;

/* ctx->event */
#define KITE_EV_INTEREST 1
#define KITE_EV_DATA 2
#define KITE_EV_NACK 3
#define KITE_EV_TIMER 4

/* ctx->flags */
#define KITE_F_CAN_BE_PREFIX 1
#define KITE_F_MUST_BE_FRESH 2
#define KITE_F_HAS_HOP_LIMIT 4
#define KITE_F_ALL_NACKED 8

/* kite_nexthop.flags */
#define KITE_NH_ELIGIBLE 1
#define KITE_NH_TRIED 2
#define KITE_NH_NACKED 4

#define KITE_MAX_NEXTHOPS 8
#define KITE_NEVER 0xffffffffffffffffULL

/* Nack reasons */
#define KITE_NACK_CONGESTION 50
#define KITE_NACK_DUPLICATE 100
#define KITE_NACK_NO_ROUTE 150

struct kite_nexthop {
	__u64 face;        /* face id */
	__u32 cost;        /* routing cost */
	__u32 reserved0;   /* the RTT is kite_nexthop_srtt_us(face) */
	__u32 flags;       /* KITE_NH_* */
	__u32 reserved;
	__u64 sent_ago_ns; /* since the Interest last went there, KITE_NEVER if it did not */
};

struct kite_ctx {
	__u32 event;            /* KITE_EV_* */
	__u32 nexthop_count;    /* entries in nexthops[], lowest cost first */
	__u64 now_ns;
	__u64 ingress;          /* face the triggering packet came from */
	__u64 timer_data;       /* KITE_EV_TIMER: what set_timer was given */
	__u32 nack_reason;      /* KITE_EV_NACK: the reason received */
	__u32 flags;            /* KITE_F_* */
	__u32 nonce;
	__u32 hop_limit;        /* valid with KITE_F_HAS_HOP_LIMIT */
	__u32 name_len;         /* name components */
	__u32 downstream_count; /* PIT downstream records */
	__u32 upstream_count;   /* PIT upstream records */
	__u32 congestion_mark;  /* of the ingress downstream */
	__u64 last_sent_ago_ns; /* since it last went to a pending upstream, or KITE_NEVER */
	__u32 lifetime_ms;      /* InterestLifetime */
	__u32 all_nacked;       /* with KITE_F_ALL_NACKED: the least severe reason */
	struct kite_nexthop nexthops[KITE_MAX_NEXTHOPS];
	__u8 fib_scratch[96];   /* per FIB entry and forwarding thread; writable */
	__u8 pit_scratch[64];   /* per PIT entry; writable */
};

/* Helpers. Each returns -1 (as unsigned) when refused. */
static long (*kite_forward_interest)(__u64 face) = (void *)1;
static long (*kite_return_nacks)(__u64 reason) = (void *)2;
static long (*kite_set_timer)(__u64 ms, __u64 data) = (void *)3;
static __u64 (*kite_random)(void) = (void *)4;
static __u64 (*kite_now)(void) = (void *)5;
static long (*kite_name_component_len)(__u64 i) = (void *)6;
static long (*kite_name_component_byte)(__u64 i, __u64 off) = (void *)7;
/* Smoothed RTT toward a nexthop in microseconds, 0 when not measured. A program that calls it
 * has RTTs measured on Data; one that does not pays nothing for them. */
static __u64 (*kite_nexthop_srtt_us)(__u64 face) = (void *)8;

#define KITE_STRATEGY __attribute__((section("strategy"), used))

/* What every shipped strategy does outside Interests: on a Nack, once every upstream has
 * Nacked, return the least severe reason downstream; Data and timers need nothing. Returns
 * whether the trigger is an Interest for the strategy to place. */
static inline int kite_interest_event(struct kite_ctx *ctx)
{
	if (ctx->event == KITE_EV_NACK && (ctx->flags & KITE_F_ALL_NACKED))
		kite_return_nacks(ctx->all_nacked);
	return ctx->event == KITE_EV_INTEREST;
}

/* Exponential retransmission suppression (10 ms initial, x2, 250 ms max), its interval in
 * the first 8 octets of the PIT scratch area. Returns 0 new, 1 forward again, 2 suppress. */
#define KITE_RETX_NEW 0
#define KITE_RETX_FORWARD 1
#define KITE_RETX_SUPPRESS 2
static inline int kite_retx_decide(struct kite_ctx *ctx)
{
	__u64 *interval = (__u64 *)ctx->pit_scratch;
	__u64 cur = *interval ? *interval : 10000000ULL;
	if (ctx->last_sent_ago_ns == KITE_NEVER)
		return KITE_RETX_NEW;
	if (ctx->last_sent_ago_ns < cur)
		return KITE_RETX_SUPPRESS;
	cur *= 2;
	*interval = cur > 250000000ULL ? 250000000ULL : cur;
	return KITE_RETX_FORWARD;
}

#endif
