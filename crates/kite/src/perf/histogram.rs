//! A fixed-size log-linear latency histogram (32 sub-buckets per power of two: about 3%
//! precision), so recording an RTT never allocates.

const SUB_BITS: u32 = 5;
const SUB: usize = 1 << SUB_BITS;
/// Powers of two covered above the linear range: values up to 2^(SUB_BITS + 28) µs.
const GROUPS: usize = 28;

/// Counts of values (microseconds) in log-linear buckets.
#[derive(Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Histogram {
            counts: vec![0; SUB * (GROUPS + 1)],
            total: 0,
        }
    }

    fn index(v: u64) -> usize {
        if v < SUB as u64 {
            return v as usize;
        }
        let group = (63 - v.leading_zeros()) - SUB_BITS + 1;
        let sub = (v >> (group - 1)) as usize - SUB;
        ((group as usize) * SUB + sub).min(SUB * (GROUPS + 1) - 1)
    }

    /// The smallest value of bucket `i`.
    fn lower_bound(i: usize) -> u64 {
        let (group, sub) = (i / SUB, i % SUB);
        if group == 0 {
            sub as u64
        } else {
            ((SUB + sub) as u64) << (group - 1)
        }
    }

    /// Records one value.
    pub fn record(&mut self, v: u64) {
        self.counts[Self::index(v)] += 1;
        self.total += 1;
    }

    /// The value below which a fraction `q` of the values lie (0 when empty).
    pub fn quantile(&self, q: f64) -> u64 {
        let want = ((self.total as f64 * q).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= want {
                return Self::lower_bound(i);
            }
        }
        0
    }

    /// Forgets every value.
    pub fn clear(&mut self) {
        self.counts.fill(0);
        self.total = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_within_the_bucket_precision() {
        let mut h = Histogram::new();
        assert_eq!(h.quantile(0.5), 0);
        for v in 1..=10_000u64 {
            h.record(v);
        }
        let near = |got: u64, want: u64| got.abs_diff(want) * 100 <= want * 4;
        assert!(near(h.quantile(0.5), 5000), "{}", h.quantile(0.5));
        assert!(near(h.quantile(0.99), 9900), "{}", h.quantile(0.99));
        assert_eq!(h.total, 10_000);
        h.record(u64::MAX);
        h.clear();
        assert_eq!(h.total, 0);
        for v in 0..32 {
            assert_eq!(Histogram::lower_bound(Histogram::index(v)), v);
        }
    }
}
