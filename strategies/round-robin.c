/* round-robin: successive Interests of a namespace take successive eligible nexthops; the
 * turn counter is in the FIB scratch area. */
#include "kite_strategy.h"

KITE_STRATEGY int round_robin(struct kite_ctx *ctx)
{
	if (!kite_interest_event(ctx))
		return 0;
	if (kite_retx_decide(ctx) == KITE_RETX_SUPPRESS)
		return 0;
	__u64 n = 0;
#pragma unroll
	for (int i = 0; i < KITE_MAX_NEXTHOPS; i++)
		if (i < ctx->nexthop_count && (ctx->nexthops[i].flags & KITE_NH_ELIGIBLE))
			n++;
	if (n == 0) {
		if (ctx->upstream_count == 0)
			kite_return_nacks(KITE_NACK_NO_ROUTE);
		return 0;
	}
	__u64 *turn = (__u64 *)ctx->fib_scratch;
	__u64 pick = *turn % n;
	*turn += 1;
	/* the pick-th eligible nexthop (no indexing by a variable: the loader allows none) */
	__u64 k = 0;
#pragma unroll
	for (int i = 0; i < KITE_MAX_NEXTHOPS; i++) {
		if (i < ctx->nexthop_count && (ctx->nexthops[i].flags & KITE_NH_ELIGIBLE)) {
			if (k == pick) {
				kite_forward_interest(ctx->nexthops[i].face);
				break;
			}
			k++;
		}
	}
	return 0;
}
