/* fastest: prefers the eligible nexthop with the lowest smoothed RTT (unmeasured ones count
 * as their cost order); one Interest in 16 also probes another eligible nexthop at random,
 * so RTTs stay fresh (in the spirit of NFD's ASF). */
#include "kite_strategy.h"

KITE_STRATEGY int fastest(struct kite_ctx *ctx)
{
	if (!kite_interest_event(ctx))
		return 0;
	if (kite_retx_decide(ctx) == KITE_RETX_SUPPRESS)
		return 0;
	__u64 best = 0, probe = 0;
	__u64 best_rtt = ~0ULL;
	int found = 0, others = 0;
	__u64 r = kite_random();
#pragma unroll
	for (int i = 0; i < KITE_MAX_NEXTHOPS; i++) {
		struct kite_nexthop *h = &ctx->nexthops[i];
		if (i >= ctx->nexthop_count)
			break;
		if (!(h->flags & KITE_NH_ELIGIBLE))
			continue;
		/* unmeasured: try it before measured ones, in cost order */
		__u64 srtt = kite_nexthop_srtt_us(h->face);
		__u64 rtt = srtt ? srtt : (__u64)i;
		if (!found || rtt < best_rtt) {
			if (found) {
				probe = best;
				others++;
			}
			best = h->face;
			best_rtt = rtt;
			found = 1;
		} else {
			others++;
			if ((r >> (8 + i)) & 1 || others == 1)
				probe = h->face;
		}
	}
	if (!found) {
		if (ctx->upstream_count == 0)
			kite_return_nacks(KITE_NACK_NO_ROUTE);
		return 0;
	}
	kite_forward_interest(best);
	if (others && (r & 15) == 0)
		kite_forward_interest(probe);
	return 0;
}
