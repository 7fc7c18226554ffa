//! The DSL twins of `TopologyParityDsl.programs` (same names, same operations, same order).

use kafka_streams_group::dsl::{
    Consumed, DslTopology, Grouped, Materialized, Produced, StreamsBuilder,
};

use super::DslProgram;

type S = String;

fn build(program: impl FnOnce(&StreamsBuilder)) -> DslTopology {
    let b = StreamsBuilder::new();
    program(&b);
    b.build().expect("the DSL program builds")
}

fn filter_to() -> DslTopology {
    build(|b| {
        b.stream::<S, S>("in")
            .filter(|_, v| !v.is_empty())
            .to("out")
    })
}

fn stateless_chain() -> DslTopology {
    build(|b| {
        b.stream::<S, S>("in")
            .filter_not(|_, v| v.is_empty())
            .map_values(|v| format!("{v}!"))
            .flat_map_values(|v| vec![v.clone(), v.clone()])
            .peek(|_, _| {})
            .select_key(|_, v| v.clone())
            .map(|k, v| (v.clone(), k.clone()))
            .flat_map(|k, v| vec![(k.clone(), v.clone())])
            .to("out")
    })
}

fn foreach_and_branches() -> DslTopology {
    build(|b| {
        let s = b.stream::<S, S>("in");
        s.foreach(|_, _| {});
        s.filter(|_, _| true).to("a");
        s.map_values(|v| v.clone()).to("b");
    })
}

fn count() -> DslTopology {
    build(|b| {
        b.stream::<S, S>("in")
            .group_by_key()
            .count()
            .to_stream()
            .to("out")
    })
}

fn group_by_count() -> DslTopology {
    build(|b| {
        b.stream::<S, S>("in")
            .group_by(|_, v| v.clone())
            .count()
            .to_stream()
            .to("out")
    })
}

fn wordcount() -> DslTopology {
    build(|b| {
        b.stream::<S, S>("lines")
            .flat_map_values(|v| v.split(' ').map(str::to_string).collect())
            .group_by(|_, w| w.clone())
            .count_with(None, Materialized::named("counts-store"))
            .to_stream()
            .to("counts")
    })
}

fn reduce() -> DslTopology {
    build(|b| {
        b.stream::<S, S>("in")
            .group_by_key()
            .reduce(|a, v| format!("{a}{v}"))
            .to_stream()
            .to("out")
    })
}

fn aggregate() -> DslTopology {
    build(|b| {
        b.stream::<S, S>("in")
            .select_key(|_, v| v.clone())
            .group_by_key()
            .aggregate(|| 0i64, |_, _, a| a + 1)
            .to_stream()
            .to("out")
    })
}

fn named() -> DslTopology {
    build(|b| {
        b.stream_with::<S, S>(&["in"], Consumed::named("src"))
            .filter_named(Some("f"), |_, _| true)
            .group_by_with(Grouped::named("g"), |_, v| v.clone())
            .count_with(Some("cnt"), Materialized::named("store"))
            .to_stream_named(Some("ts"))
            .to_with("out", Produced::named("sink"))
    })
}

fn count_materialized_unnamed() -> DslTopology {
    build(|b| {
        b.stream::<S, S>("in")
            .map(|k, v| (v.clone(), k.clone()))
            .group_by_key()
            .count_with(None, Materialized::default().with_logging_disabled())
            .to_stream()
            .to("out")
    })
}

fn named_grouping_reused() -> DslTopology {
    build(|b| {
        let g = b
            .stream::<S, S>("in")
            .map(|k, v| (v.clone(), k.clone()))
            .group_by_key_with(Grouped::named("g"));
        g.count().to_stream().to("counts");
        g.reduce(|a, v| format!("{a}{v}")).to_stream().to("reduced");
    })
}

fn unnamed_grouping_twice() -> DslTopology {
    build(|b| {
        let g = b
            .stream::<S, S>("in")
            .select_key(|_, v| v.clone())
            .group_by_key();
        g.count().to_stream().to("counts");
        g.count().to_stream().to("counts2");
    })
}

fn logging_config() -> DslTopology {
    build(|b| {
        let m = Materialized::named("s").with_logging_enabled(&[
            ("min.insync.replicas", "2"),
            ("cleanup.policy", "compact,delete"),
        ]);
        b.stream::<S, S>("in")
            .group_by_key()
            .count_with(None, m)
            .to_stream()
            .to("out")
    })
}

fn multi_topic_and_two_streams() -> DslTopology {
    build(|b| {
        b.stream_with::<S, S>(&["b", "a", "c"], Consumed::default())
            .map_values(|v| v.clone())
            .to("out");
        b.stream::<S, S>("other").filter(|_, _| true).to("out2");
    })
}

fn after_aggregation() -> DslTopology {
    build(|b| {
        b.stream::<S, S>("in")
            .group_by(|_, v| v.clone())
            .aggregate(String::new, |_, v, a| format!("{a}{v}"))
            .to_stream()
            .filter(|_, _| true)
            .map_values(|v| i32::try_from(v.len()).unwrap_or(i32::MAX))
            .to("out")
    })
}

fn to_extractor() -> DslTopology {
    build(|b| {
        b.stream::<S, S>("in").to_extractor(
            "ext",
            |k, _| format!("out-{k}"),
            Produced::named("dynamic"),
        )
    })
}

fn group_by_key_named_no_repartition() -> DslTopology {
    build(|b| {
        b.stream::<S, S>("in")
            .group_by_key_with(Grouped::named("unused"))
            .count()
            .to_stream()
            .to("out")
    })
}

fn named_processors() -> DslTopology {
    build(|b| {
        b.stream::<S, S>("in")
            .map_values_named(Some("mv"), |v| v.clone())
            .select_key_named(Some("sk"), |_, v| v.clone())
            .peek_named(Some("pk"), |_, _| {})
            .group_by_key_with(Grouped::named("by-value"))
            .reduce_with(Some("red"), Materialized::named("red-store"), |_, v| {
                v.clone()
            })
            .to_stream()
            .to("out")
    })
}

fn table_to_stream() -> DslTopology {
    build(|b| b.table::<S, S>("t").to_stream().to("out"))
}

fn table_materialized() -> DslTopology {
    build(|b| {
        b.table_with::<S, S>("t", Consumed::default(), Materialized::named("t-store"))
            .to_stream()
            .filter(|_, v| !v.is_empty())
            .to("out")
    })
}

/// Several updates of one key in one record (the record cache shows the last).
fn flat_map_values_count() -> DslTopology {
    build(|b| {
        b.stream::<S, S>("in")
            .flat_map_values(|v| v.split(' ').map(str::to_string).collect())
            .group_by_key()
            .count()
            .to_stream()
            .to("out")
    })
}

/// A cached table: a delete of an absent key is not forwarded.
fn table_materialized_to_stream() -> DslTopology {
    build(|b| {
        b.table_with::<S, S>("t", Consumed::default(), Materialized::named("tomb-store"))
            .to_stream()
            .to("out")
    })
}

/// Two repartition topics feeding one output topic.
fn two_key_changes_one_topic() -> DslTopology {
    build(|b| {
        let s = b.stream::<S, S>("in");
        for _ in 0..2 {
            s.flat_map(|_, v| v.split(' ').map(|w| (w.to_string(), v.clone())).collect())
                .group_by_key()
                .count()
                .to_stream()
                .to("out");
        }
    })
}

fn table_named_unlogged() -> DslTopology {
    build(|b| {
        b.stream::<S, S>("events")
            .map_values(|v| v.clone())
            .to("out");
        b.table_with::<S, S>(
            "t",
            Consumed::named("tbl"),
            Materialized::named("s2").with_logging_disabled(),
        )
        .to_stream_named(Some("tbl-out"))
        .to("out2")
    })
}

/// The DSL programs.
pub fn programs() -> Vec<DslProgram> {
    vec![
        ("dsl-filter-to", filter_to),
        ("dsl-stateless-chain", stateless_chain),
        ("dsl-foreach-and-branches", foreach_and_branches),
        ("dsl-count", count),
        ("dsl-group-by-count", group_by_count),
        ("dsl-wordcount", wordcount),
        ("dsl-reduce", reduce),
        ("dsl-aggregate", aggregate),
        ("dsl-named", named),
        ("dsl-count-materialized-unnamed", count_materialized_unnamed),
        ("dsl-named-grouping-reused", named_grouping_reused),
        ("dsl-unnamed-grouping-twice", unnamed_grouping_twice),
        ("dsl-logging-config", logging_config),
        (
            "dsl-multi-topic-and-two-streams",
            multi_topic_and_two_streams,
        ),
        ("dsl-after-aggregation", after_aggregation),
        ("dsl-to-extractor", to_extractor),
        (
            "dsl-group-by-key-named-no-repartition",
            group_by_key_named_no_repartition,
        ),
        ("dsl-named-processors", named_processors),
        ("dsl-table-to-stream", table_to_stream),
        ("dsl-table-materialized", table_materialized),
        ("dsl-flat-map-values-count", flat_map_values_count),
        (
            "dsl-table-materialized-to-stream",
            table_materialized_to_stream,
        ),
        ("dsl-two-key-changes-one-topic", two_key_changes_one_topic),
        ("dsl-table-named-unlogged", table_named_unlogged),
    ]
}
