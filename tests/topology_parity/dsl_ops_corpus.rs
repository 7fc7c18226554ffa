//! The Rust twins of `TopologyParityDslOps.programs` (issue 23: KTable operations, toTable,
//! merge, split, repartition, process, joins, `topology.optimization=all`).

use kafka_streams_group::dsl::{
    Branched, Consumed, DslTopology, Grouped, Materialized, Optimization, Repartitioned,
    StreamsBuilder,
};
use kafka_streams_group::topology::StoreSpec;

use super::DslProgram;

type S = String;

fn build_with(optimization: Optimization, program: impl FnOnce(&StreamsBuilder)) -> DslTopology {
    let b = StreamsBuilder::with_optimization(optimization);
    program(&b);
    b.build().expect("the DSL program builds")
}

fn build(program: impl FnOnce(&StreamsBuilder)) -> DslTopology {
    build_with(Optimization::None, program)
}

/// A value as Java's string concatenation prints it: a null is "null".
fn or_null(x: Option<&S>) -> String {
    x.map_or("null".to_string(), |x| x.to_string())
}

fn unnamed() -> Materialized {
    Materialized::default()
}

fn table_filter() -> DslTopology {
    build(|b| {
        // Java's `v != null`: a null never reaches a table filter's predicate.
        b.table::<S, S>("t")
            .filter(|_, _| true)
            .to_stream()
            .to("out")
    })
}

fn table_filter_not_materialized() -> DslTopology {
    build(|b| {
        b.table::<S, S>("t")
            // Java's `v == null`: a null never reaches a table filter's predicate.
            .filter_not_with(None, Some(Materialized::named("f-store")), |_, _| false)
            .to_stream()
            .to("out")
    })
}

fn table_filter_unnamed_materialized() -> DslTopology {
    build(|b| {
        b.table::<S, S>("t")
            .filter_with(Some("keep"), Some(unnamed()), |_, _| true)
            .to_stream()
            .to("out")
    })
}

fn table_map_values() -> DslTopology {
    build(|b| {
        b.table::<S, S>("t")
            .map_values(|v| format!("{v}!"))
            .map_values_with(Some("same"), None, |v| v.clone())
            .to_stream()
            .to("out")
    })
}

fn table_map_values_materialized() -> DslTopology {
    build(|b| {
        b.table_with::<S, S>("t", Consumed::default(), Materialized::named("src"))
            .map_values_with(Some("mv"), Some(Materialized::named("mv-store")), |v| {
                v.clone()
            })
            .to_stream()
            .to("out")
    })
}

fn table_group_by_count() -> DslTopology {
    build(|b| {
        b.table::<S, S>("t")
            .group_by(|_, v| (v.clone(), v.clone()))
            .count()
            .to_stream()
            .to("out")
    })
}

fn table_group_by_named_reduce_and_aggregate() -> DslTopology {
    build(|b| {
        let g = b
            .table::<S, S>("t")
            .group_by_with(Grouped::named("regroup"), |k, v| (v.clone(), k.clone()));
        g.reduce(|a, v| format!("{a}{v}"), |a, _| a.clone())
            .to_stream()
            .to("reduced");
        g.aggregate_with(
            Some("agg"),
            unnamed(),
            || 0i64,
            |_, _, a| a + 1,
            |_, _, a| a - 1,
        )
        .to_stream()
        .to("counted");
    })
}

fn table_chain_group_by_materialized() -> DslTopology {
    build(|b| {
        b.table::<S, S>("t")
            .filter(|_, _| true)
            .map_values(|v| v.clone())
            .group_by(|_, v| (v.clone(), v.clone()))
            .reduce_with(
                Some("red"),
                Materialized::named("red-store"),
                |_, v| v.clone(),
                |a, _| a.clone(),
            )
            .to_stream()
            .to("out")
    })
}

fn to_table() -> DslTopology {
    build(|b| b.stream::<S, S>("in").to_table().to_stream().to("out"))
}

fn to_table_after_key_change() -> DslTopology {
    build(|b| {
        b.stream::<S, S>("in")
            .select_key(|_, v| v.clone())
            .to_table_with(Some("tt"), Materialized::named("tt-store"))
            .to_stream()
            .to("out")
    })
}

fn to_table_unnamed_after_key_change() -> DslTopology {
    build(|b| {
        b.stream::<S, S>("in")
            .map(|k, v| (v.clone(), k.clone()))
            .to_table()
            .filter(|_, _| true)
            .to_stream()
            .to("out")
    })
}

fn merge() -> DslTopology {
    build(|b| {
        let a = b.stream::<S, S>("a");
        let x = b.stream::<S, S>("b").map_values(|v| v.clone());
        a.merge(&x).to("out");
    })
}

fn merge_named_then_count() -> DslTopology {
    build(|b| {
        let a = b.stream::<S, S>("a").select_key(|_, v| v.clone());
        let x = b.stream::<S, S>("b");
        a.merge_named(Some("m"), &x)
            .group_by_key()
            .count()
            .to_stream()
            .to("out");
    })
}

fn split() -> DslTopology {
    build(|b| {
        let m = b
            .stream::<S, S>("in")
            .split()
            .branch(|_, v| v.starts_with('a'))
            .branch(|_, v| v.starts_with('b'))
            .default_branch();
        m["KSTREAM-BRANCH-00000000011"].to("a");
        m["KSTREAM-BRANCH-00000000012"].to("b");
        m["KSTREAM-BRANCH-00000000010"].to("rest");
    })
}

fn split_named() -> DslTopology {
    build(|b| {
        let m = b
            .stream::<S, S>("in")
            .split_named(Some("sp-"))
            .branch_with(|_, v| v.starts_with('a'), Branched::named("a"))
            .branch_with(
                |_, v| v.starts_with('b'),
                Branched::with_consumer(|s| s.to("b")),
            )
            .default_branch_with(
                Branched::with_function(|s: kafka_streams_group::dsl::KStream<S, S>| {
                    Some(s.map_values(|v: &S| v.clone()))
                })
                .and_named("rest"),
            );
        m["sp-a"].to("a");
        m["sp-rest"].to("rest");
    })
}

fn split_no_default_then_group() -> DslTopology {
    build(|b| {
        let m = b
            .stream::<S, S>("in")
            .select_key(|_, v| v.clone())
            .split()
            .branch_with(|_, _| true, Branched::named("x"))
            .no_default_branch();
        m["KSTREAM-BRANCH-0000000002x"]
            .group_by_key()
            .count()
            .to_stream()
            .to("out");
    })
}

fn repartition() -> DslTopology {
    build(|b| b.stream::<S, S>("in").repartition().to("out"))
}

fn repartition_named_partitions() -> DslTopology {
    build(|b| {
        b.stream::<S, S>("in")
            .repartition_with(Repartitioned::named("rp").with_partitions(4))
            .group_by_key()
            .count()
            .to_stream()
            .to("out")
    })
}

fn multiple_repartitions() -> DslTopology {
    build(|b| {
        b.stream::<S, S>("in")
            .select_key(|_, v| v.clone())
            .group_by_key()
            .count()
            .to_stream()
            .select_key(|_, v| v.to_string())
            .map_values(|v| v.to_string())
            .group_by_key()
            .reduce(|_, v| v.clone())
            .to_stream()
            .repartition_with(Repartitioned::default().with_partitions(2))
            .to("out")
    })
}

/// A stand-in for a Processor-API processor supplier.
struct Supplier;

fn process() -> DslTopology {
    build(|b| {
        b.add_state_store(StoreSpec::new("ps"));
        b.stream::<S, S>("in")
            .process::<S, S>(Supplier, &["ps"])
            .process_named::<S, S>("p2", Supplier, &[])
            .process_values::<S>(Supplier, &["ps"])
            .process_values_named::<S>("pv2", Supplier, &[])
            .group_by_key()
            .count()
            .to_stream()
            .to("out")
    })
}

fn stream_table_join() -> DslTopology {
    build(|b| {
        let t = b.table::<S, S>("t");
        b.stream::<S, S>("in")
            .join(&t, |v, x| format!("{v}{x}"))
            .to("out");
    })
}

fn stream_table_left_join_named_after_key_change() -> DslTopology {
    build(|b| {
        let s = b.stream::<S, S>("in").select_key(|_, v| v.clone());
        let t = b.table_with::<S, S>("t", Consumed::default(), Materialized::named("t-store"));
        s.left_join_with(&t, Some("lj"), |v, x| {
            format!("{v}{}", x.map_or("null".to_string(), |x| x.to_string()))
        })
        .to("out");
    })
}

fn stream_table_join_unnamed_after_key_change() -> DslTopology {
    build(|b| {
        let t = b.table::<S, S>("t").filter(|_, _| true);
        b.stream::<S, S>("in")
            .map(|k, v| (v.clone(), k.clone()))
            .join(&t, |v, x| format!("{v}{x}"))
            .to("out");
    })
}

fn stream_join_aggregated_table() -> DslTopology {
    build(|b| {
        let users = b
            .stream::<S, S>("users")
            .group_by_key()
            .reduce(|_, v| v.clone());
        b.stream::<S, S>("clicks")
            .left_join(&users, |v, u| {
                format!("{v}{}", u.map_or("null".to_string(), |u| u.to_string()))
            })
            .to("out");
    })
}

fn table_table_join() -> DslTopology {
    build(|b| {
        let a = b.table::<S, S>("a");
        let x = b.table::<S, S>("b");
        a.join(&x, |l, r| format!("{l}{r}")).to_stream().to("out");
    })
}

fn table_table_left_join_named_materialized() -> DslTopology {
    build(|b| {
        let a = b.table::<S, S>("a");
        let x = b.table_with::<S, S>("b", Consumed::default(), Materialized::named("b-store"));
        a.left_join_with(
            &x,
            Some("lj"),
            Some(Materialized::named("lj-store")),
            // Java's `l + r`: a missing right value prints "null".
            |l, r| format!("{l}{}", or_null(r)),
        )
        .to_stream()
        .to("out");
    })
}

fn table_table_outer_join_unnamed_materialized() -> DslTopology {
    build(|b| {
        let a = b.table::<S, S>("a").map_values(|v| v.clone());
        let x = b.table::<S, S>("b");
        a.outer_join_with(&x, None, Some(unnamed()), |l, r| {
            format!("{}{}", or_null(l), or_null(r))
        })
        .to_stream()
        .to("out");
    })
}

fn join_chain() -> DslTopology {
    build(|b| {
        let a = b.table::<S, S>("a");
        let x = b.table::<S, S>("b");
        let y = b.table::<S, S>("c");
        let ax = a.left_join(&x, |l, r| format!("{l}{}", or_null(r)));
        // Java evaluates the receiver `stream("in")` before the argument `ax.outerJoin(y)`.
        let s = b.stream::<S, S>("in");
        let axy = ax.outer_join(&y, |l, r| format!("{}{}", or_null(l), or_null(r)));
        s.join(&axy, |v, t| format!("{v}{t}")).to("out");
    })
}

fn two_joins_one_key_change() -> DslTopology {
    build(|b| {
        let t = b.table::<S, S>("t");
        let u = b.table::<S, S>("u");
        let s = b.stream::<S, S>("in").select_key(|_, v| v.clone());
        s.join(&t, |v, x| format!("{v}{x}")).to("out1");
        s.left_join(&u, |v, x| {
            format!("{v}{}", x.map_or("null".to_string(), |x| x.to_string()))
        })
        .to("out2");
    })
}

fn named_then_unnamed_join_one_key_change() -> DslTopology {
    build(|b| {
        let t = b.table::<S, S>("t");
        let s = b.stream::<S, S>("in").map(|k, v| (v.clone(), k.clone()));
        s.join_with(&t, Some("first"), |v, x| format!("{v}{x}"))
            .to("out1");
        s.left_join(&t, |v, x| {
            format!("{v}{}", x.map_or("null".to_string(), |x| x.to_string()))
        })
        .to("out2");
    })
}

fn to_table_joined() -> DslTopology {
    build(|b| {
        let t = b.stream::<S, S>("t").to_table();
        b.stream::<S, S>("in")
            .join_with(&t, Some("j"), |v, x| format!("{v}{x}"))
            .to("out");
    })
}

fn table_source_reuse_all() -> DslTopology {
    build_with(Optimization::All, |b| {
        b.table_with::<S, S>("t", Consumed::default(), Materialized::named("t-store"))
            .to_stream()
            .to("out")
    })
}

fn stream_table_join_all() -> DslTopology {
    build_with(Optimization::All, |b| {
        let t = b.table::<S, S>("t");
        b.stream::<S, S>("in")
            .left_join(&t, |v, x| {
                format!("{v}{}", x.map_or("null".to_string(), |x| x.to_string()))
            })
            .to("out");
    })
}

fn table_group_by_all() -> DslTopology {
    build_with(Optimization::All, |b| {
        b.table_with::<S, S>("t", Consumed::named("tbl"), Materialized::default())
            .group_by(|_, v| (v.clone(), v.clone()))
            .count()
            .to_stream()
            .to("out")
    })
}

fn table_table_join_all() -> DslTopology {
    build_with(Optimization::All, |b| {
        let a = b.table::<S, S>("a");
        a.join(&b.table::<S, S>("b"), |l, r| format!("{l}{r}"))
            .to_stream()
            .to("out");
    })
}

fn wordcount_all() -> DslTopology {
    build_with(Optimization::All, |b| {
        b.stream::<S, S>("lines")
            .flat_map_values(|v| v.split(' ').map(str::to_string).collect())
            .group_by(|_, w| w.clone())
            .count_with(None, Materialized::named("counts-store"))
            .to_stream()
            .to("counts")
    })
}

fn two_aggregations_one_key_change_all() -> DslTopology {
    build_with(Optimization::All, |b| {
        let g = b
            .stream::<S, S>("in")
            .select_key(|_, v| v.clone())
            .group_by_key();
        g.count().to_stream().to("counts");
        g.reduce(|a, v| format!("{a}{v}")).to_stream().to("reduced");
    })
}

fn branches_after_key_change_all() -> DslTopology {
    build_with(Optimization::All, |b| {
        let s = b.stream::<S, S>("in").map(|k, v| (v.clone(), k.clone()));
        s.filter(|_, _| true)
            .peek(|_, _| {})
            .group_by_key()
            .count()
            .to_stream()
            .to("counts");
        s.filter_not(|_, _| false)
            .group_by_key_with(Grouped::named("g2"))
            .reduce(|_, v| v.clone())
            .to_stream()
            .to("reduced");
        s.to("mapped");
    })
}

fn value_change_blocks_merging_all() -> DslTopology {
    build_with(Optimization::All, |b| {
        let s = b.stream::<S, S>("in").select_key(|_, v| v.clone());
        s.map_values(|v| v.clone())
            .group_by_key()
            .count()
            .to_stream()
            .to("counts");
        s.group_by_key()
            .reduce(|_, v| v.clone())
            .to_stream()
            .to("reduced");
    })
}

fn join_and_count_after_key_change_all() -> DslTopology {
    build_with(Optimization::All, |b| {
        let t = b.table::<S, S>("t");
        let s = b.stream::<S, S>("in").select_key(|_, v| v.clone());
        s.join(&t, |v, x| format!("{v}{x}")).to("joined");
        s.group_by_key().count().to_stream().to("counts");
        s.to_table().to_stream().to("table");
    })
}

fn explicit_repartition_all() -> DslTopology {
    build_with(Optimization::All, |b| {
        b.stream::<S, S>("in")
            .select_key(|_, v| v.clone())
            .repartition()
            .group_by_key()
            .count()
            .to_stream()
            .to("out")
    })
}

fn multiple_repartitions_all() -> DslTopology {
    build_with(Optimization::All, |b| {
        b.stream::<S, S>("in")
            .select_key(|_, v| v.clone())
            .group_by_key()
            .count()
            .to_stream()
            .select_key(|_, v| v.to_string())
            .map_values(|v| v.to_string())
            .group_by_key()
            .reduce(|_, v| v.clone())
            .to_stream()
            .to("out")
    })
}

fn merge_two_key_changes_then_count_all() -> DslTopology {
    build_with(Optimization::All, |b| {
        let a = b.stream::<S, S>("a").select_key(|_, v| v.clone());
        let x = b.stream::<S, S>("b").select_key(|k, v| format!("{k}{v}"));
        a.merge(&x).group_by_key().count().to_stream().to("out");
    })
}

fn merge_named_then_count_all() -> DslTopology {
    build_with(Optimization::All, |b| {
        let a = b.stream::<S, S>("a").select_key(|_, v| v.clone());
        let x = b.stream::<S, S>("b");
        a.merge_named(Some("m"), &x)
            .group_by_key()
            .count()
            .to_stream()
            .to("out");
    })
}

fn key_change_merged_and_direct_all() -> DslTopology {
    build_with(Optimization::All, |b| {
        let s = b.stream::<S, S>("a").select_key(|_, v| v.clone());
        s.merge(&b.stream::<S, S>("b"))
            .group_by_key()
            .count()
            .to_stream()
            .to("counts");
        s.group_by_key()
            .reduce(|_, v| v.clone())
            .to_stream()
            .to("reduced");
    })
}

/// The programs, under their Java names.
pub fn programs() -> Vec<DslProgram> {
    vec![
        ("ops-table-filter", table_filter),
        (
            "ops-table-filter-not-materialized",
            table_filter_not_materialized,
        ),
        (
            "ops-table-filter-unnamed-materialized",
            table_filter_unnamed_materialized,
        ),
        ("ops-table-map-values", table_map_values),
        (
            "ops-table-map-values-materialized",
            table_map_values_materialized,
        ),
        ("ops-table-group-by-count", table_group_by_count),
        (
            "ops-table-group-by-named-reduce-and-aggregate",
            table_group_by_named_reduce_and_aggregate,
        ),
        (
            "ops-table-chain-group-by-materialized",
            table_chain_group_by_materialized,
        ),
        ("ops-to-table", to_table),
        ("ops-to-table-after-key-change", to_table_after_key_change),
        (
            "ops-to-table-unnamed-after-key-change",
            to_table_unnamed_after_key_change,
        ),
        ("ops-merge", merge),
        ("ops-merge-named-then-count", merge_named_then_count),
        ("ops-split", split),
        ("ops-split-named", split_named),
        (
            "ops-split-no-default-then-group",
            split_no_default_then_group,
        ),
        ("ops-repartition", repartition),
        (
            "ops-repartition-named-partitions",
            repartition_named_partitions,
        ),
        ("ops-multiple-repartitions", multiple_repartitions),
        ("ops-process", process),
        ("ops-stream-table-join", stream_table_join),
        (
            "ops-stream-table-left-join-named-after-key-change",
            stream_table_left_join_named_after_key_change,
        ),
        (
            "ops-stream-table-join-unnamed-after-key-change",
            stream_table_join_unnamed_after_key_change,
        ),
        (
            "ops-stream-join-aggregated-table",
            stream_join_aggregated_table,
        ),
        ("ops-table-table-join", table_table_join),
        (
            "ops-table-table-left-join-named-materialized",
            table_table_left_join_named_materialized,
        ),
        (
            "ops-table-table-outer-join-unnamed-materialized",
            table_table_outer_join_unnamed_materialized,
        ),
        ("ops-join-chain", join_chain),
        ("ops-two-joins-one-key-change", two_joins_one_key_change),
        (
            "ops-named-then-unnamed-join-one-key-change",
            named_then_unnamed_join_one_key_change,
        ),
        ("ops-to-table-joined", to_table_joined),
        ("ops-table-source-reuse@all", table_source_reuse_all),
        ("ops-stream-table-join@all", stream_table_join_all),
        ("ops-table-group-by@all", table_group_by_all),
        ("ops-wordcount@all", wordcount_all),
        (
            "ops-two-aggregations-one-key-change@all",
            two_aggregations_one_key_change_all,
        ),
        (
            "ops-branches-after-key-change@all",
            branches_after_key_change_all,
        ),
        (
            "ops-value-change-blocks-merging@all",
            value_change_blocks_merging_all,
        ),
        (
            "ops-join-and-count-after-key-change@all",
            join_and_count_after_key_change_all,
        ),
        ("ops-explicit-repartition@all", explicit_repartition_all),
        ("ops-multiple-repartitions@all", multiple_repartitions_all),
        (
            "ops-merge-two-key-changes-then-count@all",
            merge_two_key_changes_then_count_all,
        ),
        ("ops-merge-named-then-count@all", merge_named_then_count_all),
        (
            "ops-key-change-merged-and-direct@all",
            key_change_merged_and_direct_all,
        ),
        ("ops-table-table-join@all", table_table_join_all),
    ]
}
