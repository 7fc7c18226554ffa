//! Turning off broker hostname verification through properties is logged as a warning (the
//! only way to notice the dangerous opt-out in a configuration file); keeping it on is not.

use std::sync::Mutex;

use kafka_streams_group::ClientConfig;

static LINES: Mutex<Vec<(log::Level, String)>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        LINES
            .lock()
            .unwrap()
            .push((record.level(), record.args().to_string()));
    }
    fn flush(&self) {}
}

fn warnings_for(algorithm: &str) -> Vec<String> {
    LINES.lock().unwrap().clear();
    let c = ClientConfig::from_properties([
        ("bootstrap.servers", "localhost:9093"),
        ("security.protocol", "SSL"),
        ("ssl.endpoint.identification.algorithm", algorithm),
    ])
    .unwrap();
    assert_eq!(
        c.get_tls().unwrap().hostname_verification_disabled(),
        algorithm != "https"
    );
    LINES
        .lock()
        .unwrap()
        .iter()
        .filter(|(level, _)| *level == log::Level::Warn)
        .map(|(_, m)| m.clone())
        .collect()
}

// One test function: the logger and its buffer are process-global.
#[test]
fn hostname_verification_opt_out_is_a_warning() {
    log::set_logger(&Capture).unwrap();
    log::set_max_level(log::LevelFilter::Trace);
    for off in ["none", ""] {
        let w = warnings_for(off);
        assert_eq!(w.len(), 1, "{off:?}: {w:?}");
        assert!(
            w[0].contains("ssl.endpoint.identification.algorithm"),
            "{w:?}"
        );
        assert!(w[0].contains("verification is OFF"), "{w:?}");
    }
    assert!(warnings_for("https").is_empty());
}
