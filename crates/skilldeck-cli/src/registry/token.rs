//! `skilldeck registry token create|list|revoke`: tokens through the
//! registry's API. A new token is shown once; a list never shows secrets.

use std::io::Write;

use skilldeck_registry::names::AgentId;
use skilldeck_registry::wire::{TokenInfo, TokenRequest};

use crate::error::CliError;
use crate::exit;
use crate::format::{self, Format};
use crate::registry_client::{ClientArgs, failed};
use crate::render;

/// `registry token ...`.
#[derive(Debug, clap::Subcommand)]
pub enum TokenCommand {
    /// Create a token, scoped to one agent (`--agent`) or with explicit
    /// scopes (`--scope`); the token is printed once (on stdout, alone on
    /// its line in text format) and only its hash is stored.
    Create(CreateArgs),
    /// List tokens (an admin token sees every token, another token only
    /// itself): id, status, scopes, source, created, expires, last used,
    /// revoked. Never a secret.
    List(ListArgs),
    /// Revoke a token by its id (from `token list` or `token create`): it
    /// is refused from then on (at once on the replica that revokes it,
    /// within the token-cache TTL on the others).
    Revoke(RevokeArgs),
}

/// `token create`.
#[derive(Debug, clap::Args)]
pub struct CreateArgs {
    /// The agent the token reads as (its only scope).
    #[arg(
        long,
        value_name = "ID",
        conflicts_with = "scopes",
        required_unless_present = "scopes"
    )]
    agent: Option<String>,
    /// A scope: `admin`, `publish:<namespace>`, `review:<namespace>`,
    /// `read:<namespace>` (list, read and install that namespace's skills,
    /// nothing else: a developer's install token) or `agent:<id>`
    /// (repeatable; needs an admin token).
    #[arg(long = "scope", value_name = "SCOPE")]
    scopes: Vec<String>,
    /// A name to recognise it by in lists and audit lines.
    #[arg(long)]
    name: Option<String>,
    /// The token stops working this long after it is made: a number with
    /// a unit, `s`, `m`, `h`, `d` or `w` (e.g. `90d`, `12h`). Without it,
    /// the token works until revoked.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_secs)]
    expires_in: Option<u64>,
    #[command(flatten)]
    client: ClientArgs,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

/// `token list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Most tokens per page.
    #[arg(long, value_name = "N")]
    limit: Option<u32>,
    /// The cursor of the page (from a previous list's `next_cursor`).
    #[arg(long, value_name = "CURSOR")]
    cursor: Option<String>,
    #[command(flatten)]
    client: ClientArgs,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

/// `token revoke`.
#[derive(Debug, clap::Args)]
pub struct RevokeArgs {
    /// The token's id (`tok_...`), not the token itself.
    id: String,
    #[command(flatten)]
    client: ClientArgs,
    /// Output format.
    #[arg(long, value_parser = Format::parser(format::TABLE), default_value = "text")]
    format: Format,
}

/// Seconds in `90d`, `12h`, `30m`, `45s`, `2w`.
fn parse_duration_secs(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().map_err(|_| {
        format!(
            "'{text}' is not a duration: expected a number and a unit (s, m, h, d, w), e.g. 90d"
        )
    })?;
    let unit_secs: u64 = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 60 * 60,
        "d" => 24 * 60 * 60,
        "w" => 7 * 24 * 60 * 60,
        "" => {
            return Err(format!(
                "'{text}' has no unit: add s, m, h, d or w (e.g. {n}d)"
            ));
        }
        other => {
            return Err(format!(
                "'{other}' is not a duration unit: use s, m, h, d or w"
            ));
        }
    };
    match n.checked_mul(unit_secs) {
        Some(0) => Err("the duration must be more than zero".to_owned()),
        Some(s) => Ok(s),
        None => Err(format!("'{text}' is too long")),
    }
}

fn print_tokens(tokens: &[TokenInfo], format: Format) -> Result<(), CliError> {
    let mut out = render::stdout_for(format == Format::Json);
    if format == Format::Json {
        match tokens {
            [one] => render::write_json(&mut out, one)?,
            many => render::write_json(&mut out, many)?,
        }
    } else {
        let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".to_owned());
        for t in tokens {
            writeln!(
                out,
                "{} {} name={} scopes=[{}] source={} created={} expires={} last_used={} revoked={}",
                t.id,
                t.status,
                t.name,
                t.scopes.join(","),
                t.source,
                t.created_at,
                opt(&t.expires_at),
                opt(&t.last_used_at),
                opt(&t.revoked_at),
            )?;
        }
    }
    out.flush()?;
    Ok(())
}

/// Runs a token subcommand.
pub fn run(command: &TokenCommand) -> Result<u8, CliError> {
    match command {
        TokenCommand::Create(args) => {
            let client = args.client.client()?;
            let answer = match &args.agent {
                Some(agent) => {
                    let agent = AgentId::new(agent).map_err(|e| CliError::Usage(e.to_string()))?;
                    client.agent_token(&agent, args.name.clone(), args.expires_in)
                }
                None => client.create_token(&TokenRequest {
                    name: args.name.clone(),
                    scopes: args.scopes.clone(),
                    expires_in_seconds: args.expires_in,
                }),
            };
            let created = match answer {
                Ok(c) => c,
                Err(e) => return failed(e),
            };
            let mut out = render::stdout_for(args.format == Format::Json);
            if args.format == Format::Json {
                render::write_json(&mut out, &created)?;
            } else {
                // The token alone on stdout (for `> file`); what it is on
                // stderr.
                writeln!(out, "{}", created.token)?;
                eprintln!(
                    "token {} ({}) scopes: {} expires: {}",
                    render::safe(&created.id),
                    render::safe(&created.name),
                    render::safe(&created.scopes.join(" ")),
                    render::safe(created.expires_at.as_deref().unwrap_or("never")),
                );
            }
            out.flush()?;
            Ok(exit::OK)
        }
        TokenCommand::List(args) => {
            match args
                .client
                .client()?
                .list_tokens(args.cursor.as_deref(), args.limit)
            {
                Ok(page) if args.format == Format::Json => {
                    let mut out = render::stdout_for(true);
                    render::write_json(&mut out, &page)?;
                    out.flush()?;
                    Ok(exit::OK)
                }
                Ok(page) => {
                    print_tokens(&page.items, args.format)?;
                    if let Some(next) = page.next_cursor {
                        eprintln!("more: --cursor {}", render::safe(&next));
                    }
                    Ok(exit::OK)
                }
                Err(e) => failed(e),
            }
        }
        TokenCommand::Revoke(args) => match args.client.client()?.revoke_token(&args.id) {
            Ok(info) => {
                if args.format == Format::Text {
                    eprintln!("revoked token {}", render::safe(&info.id));
                }
                print_tokens(&[info], args.format)?;
                Ok(exit::OK)
            }
            Err(e) => failed(e),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::parse_duration_secs;

    #[test]
    fn an_expiry_is_a_number_with_a_unit() {
        assert_eq!(parse_duration_secs("90d"), Ok(90 * 86_400));
        assert_eq!(parse_duration_secs("12h"), Ok(43_200));
        assert_eq!(parse_duration_secs("2w"), Ok(14 * 86_400));
        assert!(parse_duration_secs("90").unwrap_err().contains("no unit"));
        assert!(parse_duration_secs("0s").is_err());
        assert!(parse_duration_secs("3y").unwrap_err().contains("unit"));
        assert!(parse_duration_secs("99999999999999999999w").is_err());
    }
}
