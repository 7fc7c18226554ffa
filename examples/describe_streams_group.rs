//! Describes a Streams group, like `kafka-streams-groups.sh --describe --members --verbose`.
//!
//! ```text
//! cargo run --example describe_streams_group -- --bootstrap-server 127.0.0.1:9092 --group my-app [--verbose]
//! ```
//!
//! Prints the group's state and epochs, its topology, and per member the process id, endpoint,
//! client tags and tasks. `--verbose` adds the target assignment, client id and host, instance
//! and rack ids, and the internal topics of the topology. Exit code 1 on any error (a group
//! that does not exist is `GROUP_ID_NOT_FOUND`), 2 on bad arguments.

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::time::Duration;

use kafka_streams_group::{describe, ClientConfig, StreamsTaskId};

const USAGE: &str =
    "usage: describe_streams_group --bootstrap-server HOST:PORT --group GROUP [--verbose]";

struct Args {
    bootstrap: String,
    group: String,
    verbose: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut bootstrap = None;
    let mut group = None;
    let mut verbose = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        // Both `--flag value` and `--flag=value`.
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "--bootstrap-server" | "--bootstrap" => bootstrap = Some(value("--bootstrap-server")?),
            "--group" => group = Some(value("--group")?),
            "--verbose" | "-v" => verbose = true,
            "--help" | "-h" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Args {
        bootstrap: bootstrap.ok_or("--bootstrap-server is required")?,
        group: group.ok_or("--group is required")?,
        verbose,
    })
}

/// `0:[0,1,2]; 1:[3]` — Kafka's notation: tasks grouped by subtopology.
fn tasks(set: &BTreeSet<StreamsTaskId>) -> String {
    if set.is_empty() {
        return "-".to_string();
    }
    let mut out: Vec<String> = Vec::new();
    let mut current: Option<(&str, Vec<String>)> = None;
    for t in set {
        match &mut current {
            Some((sub, parts)) if *sub == t.subtopology_id => parts.push(t.partition.to_string()),
            _ => {
                if let Some((sub, parts)) = current.take() {
                    out.push(format!("{sub}:[{}]", parts.join(",")));
                }
                current = Some((&t.subtopology_id, vec![t.partition.to_string()]));
            }
        }
    }
    if let Some((sub, parts)) = current {
        out.push(format!("{sub}:[{}]", parts.join(",")));
    }
    out.join("; ")
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("error: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let config = ClientConfig::new(args.bootstrap.as_str()).client_id("describe-streams-group");
    let group =
        match describe::describe_streams_group(&config, &args.group, Duration::from_secs(30)) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(1);
            }
        };

    println!("group:                   {}", group.group_id);
    println!("state:                   {}", group.state);
    println!("group epoch:             {}", group.group_epoch);
    println!("target assignment epoch: {}", group.target_assignment_epoch);
    println!("topology epoch:          {}", group.topology_epoch);
    if let Some(assignor) = &group.assignor_name {
        println!("assignor:                {assignor}");
    }
    match &group.topology {
        None => println!("topology:                (not initialised)"),
        Some(t) => {
            println!("topology:");
            for s in &t.subtopologies {
                let mut sources: Vec<String> = s.source_topics.clone();
                sources.extend(
                    s.repartition_source_topics
                        .iter()
                        .map(|r| format!("{} (repartition)", r.name)),
                );
                println!("  subtopology {}: reads {}", s.id, sources.join(", "));
                if args.verbose {
                    for r in &s.repartition_sink_topics {
                        println!("    writes {r} (repartition)");
                    }
                    for c in &s.state_changelog_topics {
                        println!("    changelog {} ({} partitions)", c.name, c.partitions);
                    }
                }
            }
        }
    }
    println!("members:                 {}", group.members.len());
    for m in &group.members {
        println!();
        println!("  member {} (epoch {})", m.member_id, m.member_epoch);
        println!("    process:  {}", m.process_id);
        println!(
            "    endpoint: {}",
            m.user_endpoint
                .as_ref()
                .map(|e| e.to_string())
                .unwrap_or_else(|| "-".to_string())
        );
        let tags: Vec<String> = m
            .client_tags
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        println!(
            "    tags:     {}",
            if tags.is_empty() {
                "-".to_string()
            } else {
                tags.join(",")
            }
        );
        println!("    active:   {}", tasks(&m.assignment.active));
        println!("    standby:  {}", tasks(&m.assignment.standby));
        println!("    warm-up:  {}", tasks(&m.assignment.warmup));
        if args.verbose {
            println!("    target active:  {}", tasks(&m.target_assignment.active));
            println!(
                "    target standby: {}",
                tasks(&m.target_assignment.standby)
            );
            println!("    target warm-up: {}", tasks(&m.target_assignment.warmup));
            println!("    client:   {} from {}", m.client_id, m.client_host);
            println!("    topology epoch: {}", m.topology_epoch);
            if let Some(i) = &m.instance_id {
                println!("    instance: {i}");
            }
            if let Some(r) = &m.rack_id {
                println!("    rack:     {r}");
            }
            if m.is_classic {
                println!("    protocol: classic");
            }
        }
    }
    ExitCode::SUCCESS
}
